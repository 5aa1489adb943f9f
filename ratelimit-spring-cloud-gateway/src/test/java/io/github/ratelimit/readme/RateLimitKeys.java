package io.github.ratelimit.readme;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

@Configuration
class RateLimitKeys {

	// One limit per X-User header value; a request without one gets 403
	// (the filter's deny-empty-key).
	@Bean
	KeyResolver userKeyResolver() {
		return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
	}

}
