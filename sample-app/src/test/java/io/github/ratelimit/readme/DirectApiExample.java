package io.github.ratelimit.readme;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.acquire.Reservation;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

public class DirectApiExample {

	public static void main(String[] args) throws InterruptedException {
		String customerId = args.length > 0 ? args[0] : "customer-1";
		// In memory here; a RedisRateLimitStore shares the limits between instances.
		RateLimitStore store = InMemoryRateLimitStore.create();
		RateLimiter limiter = RateLimiter.builder(store)
			.bucket("partner")
			.limit(LimitSpec.of(20, "1s", Algorithm.GCRA))
			.build();

		RateLimitResult result = limiter.tryAcquire(customerId); // never waits
		if (result.proceeds()) {
			System.out.println("remaining " + result.decision().remaining());
		}
		limiter.tryAcquire(customerId, 5); // cost 5
		// Waits up to 2s for a permit, or throws RateLimitExceededException.
		limiter.acquire("", Duration.ofSeconds(2));

		// A cost known only afterwards: reserve an estimate, settle what was used.
		Reservation reservation = limiter.reserve(customerId, 10);
		if (reservation.proceeds()) {
			int used = callTheService();
			reservation.settle(used); // less gives back, more goes into debt
		}
	}

	private static int callTheService() {
		return 7;
	}

}
