package io.github.ratelimit.acquire;

import java.util.ArrayList;
import java.util.List;

/**
 * Keeps every result and error it is told of, so tests can see the keys, limits and
 * outcomes that were decided.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RecordingObserver implements RateLimitObserver {

	private final List<RateLimitResult> results = new ArrayList<>();

	private final List<RuntimeException> errors = new ArrayList<>();

	private final List<Long> settled = new ArrayList<>();

	@Override
	public synchronized void onDecision(RateLimitResult result) {
		this.results.add(result);
	}

	@Override
	public synchronized void onError(Bucket bucket, RuntimeException failure, long storeNanos) {
		this.errors.add(failure);
	}

	@Override
	public synchronized void onSettled(RateLimitResult reserved, long actual, long owed) {
		this.settled.add(actual);
	}

	/**
	 * Returns what every settlement so far said was used.
	 * @return the amounts, oldest first
	 */
	public synchronized List<Long> settled() {
		return List.copyOf(this.settled);
	}

	/**
	 * Returns every result so far.
	 * @return the results, oldest first
	 */
	public synchronized List<RateLimitResult> results() {
		return List.copyOf(this.results);
	}

	/**
	 * Returns the outcomes of every result so far.
	 * @return the outcomes, oldest first
	 */
	public synchronized List<Outcome> outcomes() {
		return this.results.stream().map(RateLimitResult::outcome).toList();
	}

	/**
	 * Returns the latest result.
	 * @return the result
	 */
	public synchronized RateLimitResult last() {
		return this.results.get(this.results.size() - 1);
	}

	/**
	 * Returns every store failure so far.
	 * @return the failures, oldest first
	 */
	public synchronized List<RuntimeException> errors() {
		return List.copyOf(this.errors);
	}

}
