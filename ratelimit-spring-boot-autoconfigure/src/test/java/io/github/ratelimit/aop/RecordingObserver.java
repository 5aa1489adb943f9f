package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.spring.RateLimitObserver;
import io.github.ratelimit.spring.RateLimitResult;

/**
 * Keeps every decision, so tests can see the keys, limits and outcomes the interceptor
 * asked for.
 */
final class RecordingObserver implements RateLimitObserver {

	private final List<RateLimitResult> results = new ArrayList<>();

	@Override
	public synchronized void onDecision(RateLimitResult result) {
		this.results.add(result);
	}

	synchronized List<RateLimitResult> results() {
		return List.copyOf(this.results);
	}

	synchronized RateLimitResult last() {
		return this.results.get(this.results.size() - 1);
	}

}
