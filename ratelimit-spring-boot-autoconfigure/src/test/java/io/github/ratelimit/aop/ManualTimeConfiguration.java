package io.github.ratelimit.aop;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.RecordingObserver;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * A manual clock shared by the store and the acquirer's waiter, which moves it instead of
 * sleeping, and an observer that records every result. The auto-configuration backs off
 * from its own store and waiter.
 */
@Configuration(proxyBeanMethods = false)
class ManualTimeConfiguration {

	@Bean
	ManualTimeSource clock() {
		return new ManualTimeSource(1_700_000_000_000_000L);
	}

	@Bean
	ManualWaiter waiter(ManualTimeSource clock) {
		return new ManualWaiter(clock);
	}

	@Bean
	InMemoryRateLimitStore store(ManualTimeSource clock) {
		return InMemoryRateLimitStore.builder().timeSource(clock).executor(Runnable::run).build();
	}

	@Bean
	RecordingObserver recordingObserver() {
		return new RecordingObserver();
	}

}
