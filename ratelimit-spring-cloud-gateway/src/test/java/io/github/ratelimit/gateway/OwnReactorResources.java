package io.github.ratelimit.gateway;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Reactor Netty resources of the application's own, for a gateway a test starts and
 * closes beside the test contexts that Spring caches in the same JVM: Spring Boot's
 * default factory uses Reactor Netty's global resources and disposes them when its
 * context closes, which left a cached gateway's next request unanswered (30 s, then a
 * timeout).
 */
@Configuration(proxyBeanMethods = false)
class OwnReactorResources {

	@Bean
	ReactorResourceFactory reactorResourceFactory() {
		ReactorResourceFactory factory = new ReactorResourceFactory();
		factory.setUseGlobalResources(false);
		return factory;
	}

}
