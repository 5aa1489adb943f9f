package io.github.ratelimit.aop;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.RateLimitExceededException;

/**
 * The outcome of deciding every operation of one call: either every permit, or the
 * rejection (permits taken from earlier buckets have been given back by then).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Acquisition {

	private final List<Permit> permits;

	private final @Nullable Permit rejection;

	private Acquisition(List<Permit> permits, @Nullable Permit rejection) {
		this.permits = permits;
		this.rejection = rejection;
	}

	static Acquisition granted(List<Permit> permits) {
		return new Acquisition(List.copyOf(permits), null);
	}

	static Acquisition rejected(Permit rejection) {
		return new Acquisition(List.of(), rejection);
	}

	boolean granted() {
		return this.rejection == null;
	}

	List<Permit> permits() {
		return this.permits;
	}

	/**
	 * Returns when the call may proceed: after the longest leaky bucket delay.
	 * @return the time in microseconds, or {@link Long#MIN_VALUE} when there is no delay
	 */
	long proceedAtMicros() {
		long proceedAt = Long.MIN_VALUE;
		for (Permit permit : this.permits) {
			if (permit.result().decision().delayMicros() > 0) {
				proceedAt = Math.max(proceedAt, permit.proceedAtMicros());
			}
		}
		return proceedAt;
	}

	/**
	 * Handles the rejection: calls the rejecting operation's fallback method, or throws.
	 * @param target the bean (not the proxy)
	 * @param arguments the arguments of the call
	 * @return what the fallback returns
	 * @throws RateLimitExceededException when there is no fallback
	 * @throws Throwable what the fallback throws
	 */
	@Nullable Object fallbackOrThrow(@Nullable Object target, @Nullable Object[] arguments) throws Throwable {
		RateLimitExceededException exception = exception();
		FallbackMethod fallback = rejection().planned().operation().fallback();
		if (fallback == null) {
			throw exception;
		}
		return fallback.invoke(target, arguments, exception);
	}

	/**
	 * Returns the exception for the rejection.
	 * @return the exception
	 * @throws IllegalStateException when the acquisition was granted
	 */
	RateLimitExceededException exception() {
		Permit rejected = rejection();
		return new RateLimitExceededException(rejected.planned().operation().bucket().name(),
				rejected.result().decision());
	}

	/**
	 * Returns the rejecting permit.
	 * @return the permit
	 * @throws IllegalStateException when the acquisition was granted
	 */
	Permit rejection() {
		if (this.rejection == null) {
			throw new IllegalStateException("Not rejected");
		}
		return this.rejection;
	}

}
