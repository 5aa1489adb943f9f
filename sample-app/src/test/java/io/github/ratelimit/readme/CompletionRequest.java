package io.github.ratelimit.readme;

/**
 * What a client asks a model for.
 *
 * @param prompt the prompt
 * @param maxTokens the most tokens the completion may generate
 */
public record CompletionRequest(String prompt, int maxTokens) {
}
