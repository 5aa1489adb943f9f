package io.github.ratelimit.sample;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Component;

/**
 * The demo API keys and their plans: {@code demo-free} may call {@code /api/reports} 5
 * times a minute, {@code demo-premium} 50 times (10x).
 */
@Component("plans")
public class Plans {

	private static final Map<String, Long> LIMITS = Map.of("demo-free", 5L, "demo-premium", 50L);

	/**
	 * Returns whether the key belongs to a customer.
	 * @param apiKey the key
	 * @return whether it is known
	 */
	public boolean isKnown(@Nullable String apiKey) {
		return apiKey != null && LIMITS.containsKey(apiKey);
	}

	/**
	 * Returns the reports a key may fetch per minute; unknown keys get the free plan.
	 * @param apiKey the key
	 * @return the limit
	 */
	public long limitFor(@Nullable String apiKey) {
		return (apiKey != null) ? LIMITS.getOrDefault(apiKey, 5L) : 5L;
	}

}
