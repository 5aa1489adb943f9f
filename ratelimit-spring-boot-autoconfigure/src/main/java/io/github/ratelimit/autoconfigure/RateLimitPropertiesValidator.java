package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import org.springframework.validation.Errors;

import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.LimitSettings.InvalidLimitException;

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
		Duration timeout = properties.getRedis().getTimeout();
		if (timeout == null || timeout.isNegative() || timeout.isZero()) {
			errors.rejectValue("redis.timeout", "invalid", "must be positive");
		}
		if (properties.getMemory().getMaxKeys() < 1) {
			errors.rejectValue("memory.max-keys", "invalid", "must be at least 1");
		}
		LimitSettings defaults = RateLimitSettingsMapper.limit(properties.getDefaults());
		try {
			defaults.toSpec();
		}
		catch (InvalidLimitException ex) {
			errors.rejectValue("defaults." + ex.getField(), "invalid", ex.getReason());
		}
	}

}
