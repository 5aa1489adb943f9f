package io.github.ratelimit.acquire;

import java.util.List;

import io.github.ratelimit.RateLimitExceededException;

/**
 * What one call got from {@link Acquirer#acquire}: every permit it asked for, or a
 * rejection. {@link #results()} answers the requests in order: {@code results().get(i)}
 * is the result of request {@code i}. A granted acquisition has a result for every
 * request; a rejected one ends at the rejecting request, and by then the permits of the
 * requests before it have been given back.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Acquisition {

	private final List<RateLimitResult> results;

	private final boolean granted;

	private Acquisition(List<RateLimitResult> results, boolean granted) {
		this.results = List.copyOf(results);
		this.granted = granted;
	}

	static Acquisition granted(List<RateLimitResult> results) {
		return new Acquisition(results, true);
	}

	static Acquisition rejected(List<RateLimitResult> results) {
		return new Acquisition(results, false);
	}

	/**
	 * Returns whether the call may proceed: every request was allowed (perhaps after
	 * waiting) or rejected only by a bucket in shadow mode.
	 * @return {@code true} when granted
	 */
	public boolean granted() {
		return this.granted;
	}

	/**
	 * Returns the result of each request decided, in the order of the requests.
	 * @return the results; for a rejection, the last one is the rejecting request's
	 */
	public List<RateLimitResult> results() {
		return this.results;
	}

	/**
	 * Returns the rejecting request's result.
	 * @return the rejection
	 * @throws IllegalStateException when the acquisition was granted
	 */
	public RateLimitResult rejection() {
		if (this.granted) {
			throw new IllegalStateException("The acquisition was granted: " + this.results);
		}
		return this.results.get(this.results.size() - 1);
	}

	/**
	 * Returns the exception that reports the rejection.
	 * @return the exception, naming the rejecting bucket and carrying its decision
	 * @throws IllegalStateException when the acquisition was granted
	 */
	public RateLimitExceededException exception() {
		RateLimitResult rejection = rejection();
		return new RateLimitExceededException(rejection.bucket().name(), rejection.decision());
	}

	@Override
	public String toString() {
		return (this.granted ? "granted " : "rejected ") + this.results;
	}

}
