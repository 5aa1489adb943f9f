package io.github.ratelimit.gateway;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;

/**
 * A gateway as a user writes one: auto-configuration, routes from properties, and a key
 * resolver bean the routes name.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class GatewayTestApplication {

	@Bean
	KeyResolver userKeyResolver() {
		return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
	}

}
