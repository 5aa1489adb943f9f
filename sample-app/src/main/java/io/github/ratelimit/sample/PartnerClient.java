package io.github.ratelimit.sample;

import java.time.Instant;

import org.springframework.stereotype.Component;

import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;

/**
 * Calls a (pretend) third-party API that allows 2 calls per second across all our
 * instances: one global limit, no key. Callers wait for a permit, up to 3 seconds,
 * instead of failing.
 */
@Component
class PartnerClient {

	@RateLimited(bucket = "partner", limit = 2, window = "1s", onLimit = OnLimit.WAIT, maxWait = "3s")
	public String fetchQuote() {
		return "partner quote at " + Instant.now();
	}

}
