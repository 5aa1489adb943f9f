package io.github.ratelimit.autoconfigure;

import java.util.Locale;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import io.github.ratelimit.autoconfigure.RateLimitProperties.StoreType;

/**
 * Matches when {@code ratelimit.store} allows a store type: {@code auto} allows both.
 */
abstract class StoreCondition extends SpringBootCondition {

	private final StoreType type;

	StoreCondition(StoreType type) {
		this.type = type;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		String value = context.getEnvironment().getProperty("ratelimit.store", "auto");
		String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
		boolean matches = normalized.equals(StoreType.AUTO.name()) || normalized.equals(this.type.name());
		String message = "ratelimit.store=" + value;
		return matches ? ConditionOutcome.match(message + " allows " + this.type)
				: ConditionOutcome.noMatch(message + " excludes " + this.type);
	}

	static final class Redis extends StoreCondition {

		Redis() {
			super(StoreType.REDIS);
		}

	}

	static final class Memory extends StoreCondition {

		Memory() {
			super(StoreType.MEMORY);
		}

	}

}
