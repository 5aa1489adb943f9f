package io.github.ratelimit.algorithm;

import io.github.ratelimit.Decision;

/**
 * What one limit answers to one request: the decision, and the two states a store may
 * keep.
 *
 * @param decision the decision on this limit
 * @param next the state once this request is taken: with the permits taken when the
 * decision allows, the same as {@code kept} when it rejects
 * @param kept the state if the request is not taken (another limit of the same call
 * rejects it): the state before, tidied for the time of the request, or that state itself
 * @author ratelimit-spring-boot-starter authors
 */
public record Transition(Decision decision, LimitState next, LimitState kept) {

	static Transition rejected(Decision decision, LimitState kept) {
		return new Transition(decision, kept, kept);
	}

}
