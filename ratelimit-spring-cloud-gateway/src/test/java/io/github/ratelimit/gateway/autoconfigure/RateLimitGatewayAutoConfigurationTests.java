package io.github.ratelimit.gateway.autoconfigure;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.PrincipalNameKeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.gateway.BucketRateLimiter;
import io.github.ratelimit.gateway.ClientIpKeyResolver;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.RateLimitHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitGatewayAutoConfiguration}: what a gateway gets by default, with and
 * without Redis, and every way to turn it off.
 */
class RateLimitGatewayAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
						GatewayAutoConfiguration.class, SslAutoConfiguration.class, WebFluxAutoConfiguration.class))
		.withUserConfiguration(ServerPropertiesConfiguration.class)
		.withPropertyValues("ratelimit.store=memory", "ratelimit.buckets.orders.limit=5",
				"ratelimit.buckets.orders.window=1m");

	@Test
	void theRequestRateLimiterFilterUsesOurLimiterByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(BucketRateLimiter.class).hasSingleBean(PrincipalNameKeyResolver.class);
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
				.isSameAs(context.getBean(BucketRateLimiter.class));
		});
	}

	@Test
	void theClientIpKeyResolverIsThereByNameButTheGatewaysDefaultKeyResolverStays() {
		this.runner.run((context) -> {
			assertThat(context).hasBean("clientIpKeyResolver");
			assertThat(context.getBean("clientIpKeyResolver")).isInstanceOf(ClientIpKeyResolver.class);
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultKeyResolver())
				.isSameAs(context.getBean(PrincipalNameKeyResolver.class));
		});
	}

	@Test
	void withRedisTheGatewaysOwnLimiterStaysAvailableByNameAndOursIsTheDefault() throws Exception {
		// Only the beans: Lettuce connects lazily, and the memory store never asks Redis.
		this.runner
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
							Class.forName("org.springframework.cloud.gateway.config.GatewayRedisAutoConfiguration")))
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisRateLimiter.class)
					.hasSingleBean(BucketRateLimiter.class)
					.getBeans(RateLimiter.class)
					.containsOnlyKeys("redisRateLimiter", "bucketRateLimiter");
				assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
					.isSameAs(context.getBean(BucketRateLimiter.class));
				assertThat(context.getBean(RateLimiter.class)).isSameAs(context.getBean(BucketRateLimiter.class));
			});
	}

	@Test
	void decisionsCarryTheConfiguredHeaders() {
		this.runner.withPropertyValues("ratelimit.headers=legacy").run((context) -> {
			Response response = context.getBean(BucketRateLimiter.class)
				.isAllowed("orders", "alice")
				.block(Duration.ofSeconds(5));
			assertThat(response.isAllowed()).isTrue();
			assertThat(response.getHeaders()).containsEntry("X-RateLimit-Remaining", "4")
				.doesNotContainKey("RateLimit");
		});
	}

	@Test
	void aRateLimitHeadersBeanIsUsed() {
		this.runner.withUserConfiguration(NoHeadersConfiguration.class).run((context) -> {
			Response response = context.getBean(BucketRateLimiter.class)
				.isAllowed("orders", "alice")
				.block(Duration.ofSeconds(5));
			assertThat(response.getHeaders()).isEmpty();
		});
	}

	@Test
	void aLimiterOfTheApplicationReplacesOurs() {
		this.runner.withUserConfiguration(OwnLimiterConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(BucketRateLimiter.class).hasBean("ownLimiter");
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
				.isSameAs(context.getBean("ownLimiter"));
		});
	}

	@Test
	void aPrimaryLimiterOfTheApplicationConflictsWithOursAsTheReadmeSays() {
		this.runner.withUserConfiguration(PrimaryLimiterConfiguration.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("more than one 'primary' bean"));
	}

	@Test
	void backsOffWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(BucketRateLimiter.class)
				.doesNotHaveBean(RequestRateLimiterGatewayFilterFactory.class);
		});
	}

	@Test
	void backsOffWhenTheRequestRateLimiterFilterIsDisabled() {
		this.runner.withPropertyValues("spring.cloud.gateway.server.webflux.filter.request-rate-limiter.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(BucketRateLimiter.class));
	}

	@Test
	void backsOffWhenTheGatewayIsDisabled() {
		this.runner.withPropertyValues("spring.cloud.gateway.server.webflux.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Acquirer.class)
				.doesNotHaveBean(BucketRateLimiter.class));
	}

	@Test
	void backsOffWithoutTheGateway() {
		this.runner.withClassLoader(new FilteredClassLoader(RateLimiter.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Acquirer.class)
				.doesNotHaveBean(BucketRateLimiter.class));
	}

	/**
	 * What the gateway's HTTP client configuration needs from the embedded server's
	 * auto-configuration, which a context runner does not start.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(ServerProperties.class)
	static class ServerPropertiesConfiguration {

	}

	@Configuration(proxyBeanMethods = false)
	static class NoHeadersConfiguration {

		@Bean
		RateLimitHeaders rateLimitHeaders() {
			return new RateLimitHeaders(HeadersMode.NONE);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrimaryLimiterConfiguration {

		@Bean
		@Primary
		RateLimiter<Object> ownLimiter() {
			return new RateLimiter<>() {

				@Override
				public Mono<Response> isAllowed(String routeId, String id) {
					return Mono.just(new Response(true, Map.of()));
				}

				@Override
				public Map<String, Object> getConfig() {
					return Map.of();
				}

				@Override
				public Class<Object> getConfigClass() {
					return Object.class;
				}

				@Override
				public Object newConfig() {
					return new Object();
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnLimiterConfiguration {

		@Bean
		BucketRateLimiter ownLimiter(BucketRegistry registry, Acquirer acquirer) {
			return new BucketRateLimiter(registry, acquirer, new RateLimitHeaders(HeadersMode.BOTH), null);
		}

	}

}
