package io.github.ratelimit.health;

import java.util.Locale;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.status.StoreStatus;
import io.github.ratelimit.status.StoreStatusSource;

/**
 * Reports the rate limit store: {@code UP} while this instance decides as configured,
 * {@code OUT_OF_SERVICE} while its store fails and {@code ratelimit.failure-mode} is
 * {@code closed} (every limited request is then answered 503), so that a readiness group
 * that includes it takes such an instance out of the load balancer. With {@code fallback}
 * or {@code open} the instance still serves while Redis fails: the indicator stays
 * {@code UP} and its details say {@code degraded}.
 * <p>
 * Details: {@code store} ({@code redis}, {@code memory}), {@code state} ({@code healthy}
 * or {@code degraded}), {@code breaker} ({@code closed}, {@code open}, {@code half-open},
 * {@code none}), {@code failureMode}, {@code failures} (failed store calls since
 * startup), {@code instances} (how many instances share the limits, as this one counts
 * them) and, while degraded, {@code lastFailure}: the last failure, its cause first (such
 * as {@code Redis authentication failed (...)} or {@code Redis refused the connection
 * (...)}). With Redis, the state follows the store's heartbeat too, so it turns
 * {@code degraded} within about a heartbeat once Redis stops answering, though no request
 * came, and the details add {@code maxmemoryPolicy}: Redis's {@code maxmemory-policy} (an
 * {@code allkeys-*} or {@code volatile-*} policy may evict limit keys, which resets
 * them), or {@code unknown} when Redis refuses {@code CONFIG GET}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitHealthIndicator implements HealthIndicator {

	private final StoreStatusSource status;

	private final @Nullable Supplier<String> maxmemoryPolicy;

	/**
	 * Creates an indicator.
	 * @param status the store's status
	 */
	public RateLimitHealthIndicator(StoreStatusSource status) {
		this(status, null);
	}

	/**
	 * Creates an indicator that names the store server's eviction policy too.
	 * @param status the store's status
	 * @param maxmemoryPolicy the server's {@code maxmemory-policy}, {@code unknown} when
	 * it could not be read, or {@code null} when the store has none
	 */
	public RateLimitHealthIndicator(StoreStatusSource status, @Nullable Supplier<String> maxmemoryPolicy) {
		this.status = status;
		this.maxmemoryPolicy = maxmemoryPolicy;
	}

	@Override
	public Health health() {
		StoreStatus status = this.status.probe();
		Health.Builder health = (status.degraded() && status.failureMode() == FailureMode.CLOSED)
				? Health.outOfService() : Health.up();
		health.withDetail("store", status.store())
			.withDetail("state", status.degraded() ? "degraded" : "healthy")
			.withDetail("breaker", status.breaker().name().toLowerCase(Locale.ROOT).replace('_', '-'))
			.withDetail("failureMode", status.failureMode().name().toLowerCase(Locale.ROOT))
			.withDetail("failures", status.failures())
			.withDetail("instances", status.instances());
		if (this.maxmemoryPolicy != null) {
			health.withDetail("maxmemoryPolicy", this.maxmemoryPolicy.get());
		}
		if (status.lastFailure() != null) {
			health.withDetail("lastFailure", status.lastFailure());
		}
		return health.build();
	}

}
