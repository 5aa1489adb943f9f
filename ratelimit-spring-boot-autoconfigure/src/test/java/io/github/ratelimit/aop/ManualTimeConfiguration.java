package io.github.ratelimit.aop;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * A manual clock shared by the store and the interceptor, and a waiter that moves it.
 */
@Configuration(proxyBeanMethods = false)
class ManualTimeConfiguration {

	@Bean
	ManualTimeSource clock() {
		return new ManualTimeSource(1_700_000_000_000_000L);
	}

	@Bean
	ManualPermitWaiter waiter(ManualTimeSource clock) {
		return new ManualPermitWaiter(clock);
	}

	@Bean
	InMemoryRateLimitStore store(ManualTimeSource clock) {
		return InMemoryRateLimitStore.builder().timeSource(clock).executor(Runnable::run).build();
	}

}
