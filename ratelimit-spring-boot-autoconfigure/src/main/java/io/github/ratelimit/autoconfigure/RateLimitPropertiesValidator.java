package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.validation.Errors;

import io.github.ratelimit.InvalidLimitSpecException;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.LimitSettings.InvalidLimitException;
import io.github.ratelimit.clientip.AddressRange;

/**
 * Checks the {@code ratelimit.*} settings that are not limits of a bucket (those are
 * checked by the bucket registry), once, when the properties are bound: every bean that
 * reads them sees valid values, and Spring Boot reports a mistake with the property's
 * name, its value and where it was set. Fields are named in the form properties are
 * written in ({@code memory.max-keys}), which is how Spring Boot finds the bound value
 * and its origin.
 */
final class RateLimitPropertiesValidator {

	private RateLimitPropertiesValidator() {
	}

	static void validate(RateLimitProperties properties, Errors errors) {
		String prefix = properties.getKeyPrefix();
		if (prefix == null || prefix.isBlank() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			errors.rejectValue("key-prefix", "invalid",
					"must be non-empty and must not contain braces (they would break Redis Cluster hash tags)");
		}
		validateRedis(properties.getRedis(), errors);
		RateLimitProperties.Breaker breaker = properties.getBreaker();
		positive("breaker.window", breaker.getWindow(), errors);
		int threshold = breaker.getFailureRateThreshold();
		if (threshold < 1 || threshold > 100) {
			errors.rejectValue("breaker.failure-rate-threshold", "invalid", "must be a percentage between 1 and 100");
		}
		positive("breaker.wait-in-open-state", breaker.getWaitInOpenState(), errors);
		atLeastOne("breaker.probes", breaker.getProbes(), errors);
		atLeastOne("fallback.remembered-keys", properties.getFallback().getRememberedKeys(), errors);
		Integer instances = properties.getFallback().getInstances();
		if (instances != null) {
			atLeastOne("fallback.instances", instances, errors);
		}
		atLeastOne("memory.max-keys", properties.getMemory().getMaxKeys(), errors);
		double nearLimitShare = properties.getMetrics().getNearLimitShare();
		if (!(nearLimitShare >= 0 && nearLimitShare <= 1)) {
			errors.rejectValue("metrics.near-limit-share", "invalid",
					"must be a share between 0 and 1 (0.1 for a tenth of the limit; 0 turns the counter off)");
		}
		validateClientIp(properties.getClientIp(), errors);
		String statusPath = properties.getStatusEndpoint().getPath();
		if (statusPath == null || !statusPath.startsWith("/") || statusPath.chars().anyMatch(Character::isWhitespace)
				|| statusPath.contains("*") || statusPath.contains("{")) {
			errors.rejectValue("status-endpoint.path", "invalid",
					"must be a plain path within the application starting with '/', e.g. /rate-limit");
		}
		if (properties.getStatusEndpoint().isEnabled() && properties.getFilter().getOrder() == Integer.MIN_VALUE) {
			// The status endpoint runs just before the filter, so that asking spends
			// nothing.
			errors.rejectValue("filter.order", "invalid",
					"must be above Integer.MIN_VALUE while ratelimit.status-endpoint.enabled is true, so that the "
							+ "status endpoint can run before the filter");
		}
		LimitSettings defaults = RateLimitSettingsMapper.limit(properties.getDefaults());
		try {
			defaults.toSpec();
		}
		catch (InvalidLimitException ex) {
			// Spring Boot shows the value beside the reason: LimitSpec's words without
			// it.
			String hint = (ex.getCause() instanceof InvalidLimitSpecException spec) ? spec.getHint() : null;
			errors.rejectValue("defaults." + ex.getField(), "invalid",
					ex.getReason() + ((hint != null) ? "; " + hint : ""));
		}
	}

	/**
	 * The Redis store's settings, checked whichever store is chosen, as every other
	 * setting is: a mistake does not wait for the store to be switched on to show.
	 */
	@SuppressWarnings("deprecation")
	private static void validateRedis(RateLimitProperties.Redis redis, Errors errors) {
		positive("redis.timeout", redis.getTimeout(), errors);
		positive("redis.connect-timeout", redis.getConnectTimeout(), errors);
		positive("redis.heartbeat-interval", redis.getHeartbeatInterval(), errors);
		if (redis.getLiveLimitsPollInterval() != null) {
			positive("redis.live-limits-poll-interval", redis.getLiveLimitsPollInterval(), errors);
		}
		RateLimitProperties.LocalRejections local = redis.getLocalRejections();
		if (local.isEnabled()) {
			atLeastOne("redis.local-rejections.max-keys", local.getMaxKeys(), errors);
			positive("redis.local-rejections.max-age", local.getMaxAge(), errors);
		}
	}

	private static void positive(String field, @Nullable Duration value, Errors errors) {
		if (value == null || value.isNegative() || value.isZero()) {
			errors.rejectValue(field, "invalid", "must be positive");
		}
	}

	private static void atLeastOne(String field, long value, Errors errors) {
		if (value < 1) {
			errors.rejectValue(field, "invalid", "must be at least 1");
		}
	}

	private static void validateClientIp(RateLimitProperties.ClientIp clientIp, Errors errors) {
		List<String> trustedProxies = clientIp.getTrustedProxies();
		for (int i = 0; i < trustedProxies.size(); i++) {
			String proxy = trustedProxies.get(i);
			try {
				AddressRange.parse(proxy);
			}
			catch (IllegalArgumentException ex) {
				// On the list: Spring Boot finds its value however it was written (a
				// comma-separated value has no element of its own); the entry is named
				// here.
				errors.rejectValue("client-ip.trusted-proxies", "invalid",
						"[" + i + "] '" + proxy + "' is not an IP address or CIDR range: " + ex.getMessage()
								+ "; write e.g. 10.0.0.0/8, 2001:db8::/32 or 192.168.1.10");
			}
		}
		if (clientIp.getTrustedHops() < 0) {
			errors.rejectValue("client-ip.trusted-hops", "invalid", "must not be negative (0 trusts no hop)");
		}
		String header = clientIp.getHeader();
		if (header == null || header.isBlank()
				|| !header.trim().chars().allMatch(RateLimitPropertiesValidator::token)) {
			errors.rejectValue("client-ip.header", "invalid",
					"must be a header name, e.g. X-Forwarded-For, Forwarded or X-Real-IP");
		}
	}

	/** A character of an HTTP token (RFC 9110), which a header name is. */
	private static boolean token(int c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
				|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
	}

}
