package io.github.ratelimit.aop;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The system clock and real waits.
 */
@Configuration(proxyBeanMethods = false)
class SystemTimeConfiguration {

	@Bean
	TimeSource clock() {
		return TimeSource.system();
	}

	@Bean
	PermitWaiter waiter() {
		return PermitWaiter.system();
	}

	@Bean
	InMemoryRateLimitStore store() {
		return InMemoryRateLimitStore.create();
	}

}
