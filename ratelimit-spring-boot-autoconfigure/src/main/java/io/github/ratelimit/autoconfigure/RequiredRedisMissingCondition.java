package io.github.ratelimit.autoconfigure;

import java.util.Locale;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code ratelimit.store=redis} but no Redis store could be created (this
 * configuration is only consulted when no {@code RateLimitStore} bean exists).
 */
class RequiredRedisMissingCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		String value = context.getEnvironment().getProperty("ratelimit.store", "auto");
		boolean redis = value.trim().toLowerCase(Locale.ROOT).equals("redis");
		return redis ? ConditionOutcome.match("ratelimit.store=redis without a Redis store")
				: ConditionOutcome.noMatch("ratelimit.store=" + value);
	}

}
