package io.github.ratelimit.readme;

/**
 * One streamed piece of a completion.
 *
 * @param text the text
 * @param tokens the tokens it used
 */
public record Chunk(String text, int tokens) {
}
