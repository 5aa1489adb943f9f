package io.github.ratelimit.sample;

import java.time.Duration;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * Replaces the sample's in-memory store with one on a manual clock (the
 * auto-configuration backs off when a {@link RateLimitStore} bean exists), so tests
 * recover from a rejection by moving the clock instead of sleeping.
 */
@TestConfiguration(proxyBeanMethods = false)
class ManualClockConfiguration {

	private static final long HOUR_MICROS = Duration.ofHours(1).toNanos() / 1000L;

	@Bean
	ManualTimeSource rateLimitClock() {
		return new ManualTimeSource(1_700_000_000_000_000L);
	}

	@Bean
	RateLimitStore manualClockRateLimitStore(ManualTimeSource rateLimitClock) {
		return InMemoryRateLimitStore.builder().timeSource(rateLimitClock).executor(Runnable::run).build();
	}

	/**
	 * Moves the clock to the start of an hour at least an hour ahead: every limit of the
	 * sample (the longest window is a minute) is full again for every key, and windows
	 * start exactly now, so header values are exact.
	 * @param clock the clock
	 */
	static void startFresh(ManualTimeSource clock) {
		clock.setMicros((clock.nowMicros() / HOUR_MICROS + 2) * HOUR_MICROS);
	}

}
