package io.github.ratelimit.sample;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.stereotype.Service;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.annotation.RateLimited;

/**
 * A costly quote computation, 3 per 10 seconds for everyone; past that, callers get a
 * cached quote from the fallback method instead of an error.
 */
@Service
class QuoteService {

	private static final List<String> QUOTES = List.of("Simplicity is prerequisite for reliability.",
			"Premature optimization is the root of all evil.", "Make it work, make it right, make it fast.");

	private final AtomicInteger next = new AtomicInteger();

	@RateLimited(bucket = "quotes", limit = 3, window = "10s", algorithm = Algorithm.FIXED_WINDOW,
			fallbackMethod = "cachedQuote")
	public Quote quote() {
		return new Quote(QUOTES.get(this.next.getAndIncrement() % QUOTES.size()), false);
	}

	Quote cachedQuote(RateLimitExceededException ex) {
		return new Quote(QUOTES.get(0), true);
	}

	record Quote(String text, boolean cached) {
	}

}
