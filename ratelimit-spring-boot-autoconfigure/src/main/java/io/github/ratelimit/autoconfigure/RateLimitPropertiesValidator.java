package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import io.github.ratelimit.spring.LimitSettings;
import io.github.ratelimit.spring.LimitSettings.InvalidLimitException;

/**
 * Checks the {@code ratelimit.*} settings that are not limits of a bucket (those are
 * checked by the bucket registry), so a mistake fails startup with the property's name.
 */
final class RateLimitPropertiesValidator {

	private RateLimitPropertiesValidator() {
	}

	static void validate(RateLimitProperties properties) {
		String prefix = properties.getKeyPrefix();
		if (prefix == null || prefix.isBlank() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.key-prefix", prefix,
					"must be non-empty and must not contain braces (they would break Redis Cluster hash tags)");
		}
		Duration timeout = properties.getRedis().getTimeout();
		if (timeout == null || timeout.isNegative() || timeout.isZero()) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.redis.timeout", timeout,
					"must be positive");
		}
		if (properties.getMemory().getMaxKeys() < 1) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.memory.max-keys",
					properties.getMemory().getMaxKeys(), "must be at least 1");
		}
		LimitSettings defaults = RateLimitSettingsMapper.limit(properties.getDefaults());
		try {
			defaults.toSpec();
		}
		catch (InvalidLimitException ex) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.defaults." + ex.getField(), ex.getValue(),
					ex.getReason());
		}
	}

}
