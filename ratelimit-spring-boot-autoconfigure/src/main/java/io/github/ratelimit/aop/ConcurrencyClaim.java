package io.github.ratelimit.aop;

import java.util.List;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ProxyMethodInvocation;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;

/**
 * The concurrency permit that a call of a method with both {@code @ConcurrencyLimited}
 * and {@code @RateLimited} takes together with its rate limits. The concurrency
 * interceptor, which runs first, hands it to the rate limit interceptor on the
 * invocation; that one takes the permit and decides the rate limits in one store call
 * when they limit the same bucket and key (two calls otherwise, the permit first), and
 * holds the permit for as long as the call runs, whatever it returns.
 *
 * @param limiter the concurrency limit
 * @param key the key, as the {@code @ConcurrencyLimited} expression evaluated it
 * @param sameBucket whether a {@code @RateLimited} operation of the method limits the
 * limiter's bucket too: a refusal's policy is then named apart
 * @author ratelimit-spring-boot-starter authors
 */
record ConcurrencyClaim(ConcurrencyLimiter limiter, String key, boolean sameBucket) {

	private static final String ATTRIBUTE = ConcurrencyClaim.class.getName();

	/**
	 * Hands the claim to the interceptors that run after this one.
	 * @param invocation the call, as Spring's AOP proxy makes it
	 */
	void handTo(ProxyMethodInvocation invocation) {
		invocation.setUserAttribute(ATTRIBUTE, this);
	}

	/**
	 * Returns the claim handed to a call, if any.
	 * @param invocation the call
	 * @return the claim, or {@code null} when the call's permit is not this interceptor's
	 * to take
	 */
	static @Nullable ConcurrencyClaim of(MethodInvocation invocation) {
		return (invocation instanceof ProxyMethodInvocation proxied
				&& proxied.getUserAttribute(ATTRIBUTE) instanceof ConcurrencyClaim claim) ? claim : null;
	}

	/**
	 * Takes the permit and the permits of the call's requests, on the calling thread.
	 * @param acquirer decides the rate limits
	 * @param requests the call's requests; empty when none applies to this call
	 * @return the acquisition, with the permit held when it is granted
	 * @throws ConcurrencyLimitExceededException when no permit was free, or when this JVM
	 * stopped for longer than the lease while it asked
	 */
	Held acquire(Acquirer acquirer, List<PermitRequest> requests) {
		return held(acquirer.acquireHolding(requests, this.limiter, this.key), acquirer);
	}

	/**
	 * Turns what {@link Acquirer#acquireHolding} took into the call's acquisition and
	 * permit.
	 * @param holding what was taken
	 * @param acquirer gives back what the rate limits granted when the permit is not the
	 * call's after all
	 * @return the acquisition, with the permit held when it is granted
	 * @throws ConcurrencyLimitExceededException when no permit was free, or when this JVM
	 * stopped for longer than the lease while it asked
	 */
	Held held(Acquirer.Holding holding, Acquirer acquirer) {
		ConcurrencyPermit permit = holding.permit();
		Acquisition acquisition = holding.acquisition();
		if (acquisition == null) {
			throw new ConcurrencyLimitExceededException(this.limiter.bucket(), permit.decision(), this.sameBucket);
		}
		if (acquisition.granted() && permit.leaseExpired()) {
			// As the concurrency interceptor alone does: the permit may be another call's
			// by now, and what the rate limits granted goes back with it.
			permit.release();
			acquirer.refund(acquisition.results());
			throw new ConcurrencyLimitExceededException(this.limiter.bucket(), permit.decision(), this.sameBucket);
		}
		return new Held(acquisition, acquisition.granted() ? permit : null);
	}

	/**
	 * What a call took: its rate limits' acquisition and, when the call was limited both
	 * ways and granted, its concurrency permit.
	 *
	 * @param acquisition the rate limits' acquisition
	 * @param permit the permit held while the call runs, or {@code null}
	 */
	record Held(Acquisition acquisition, @Nullable ConcurrencyPermit permit) {

		/**
		 * What a call limited by rate alone took.
		 * @param acquisition the acquisition
		 * @return the acquisition, with no permit
		 */
		static Held of(Acquisition acquisition) {
			return new Held(acquisition, null);
		}
	}

}
