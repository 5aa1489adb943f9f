package io.github.ratelimit.gateway;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A route that names a bucket no configuration defines fails the gateway's startup, and
 * Spring Boot's failure report names the route, the bucket and the fix.
 */
@ExtendWith(OutputCaptureExtension.class)
class InvalidRouteStartupTests {

	@Test
	void aRouteNamingAnUndefinedBucketFailsStartupNamingTheFix(CapturedOutput output) {
		String route = "spring.cloud.gateway.server.webflux.routes[0]";
		SpringApplicationBuilder gateway = new SpringApplicationBuilder(GatewayTestApplication.class).properties(
				"server.port=0", "ratelimit.store=memory",
				"spring.autoconfigure.exclude=org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
				"ratelimit.buckets.api.limit=3", route + ".id=items", route + ".uri=http://127.0.0.1:1",
				route + ".predicates[0]=Path=/items/**", route + ".filters[0].name=RequestRateLimiter",
				route + ".filters[0].args.key-resolver=#{@userKeyResolver}",
				route + ".filters[0].args.ratelimit.bucket=apu");
		assertThatExceptionOfType(InvalidRouteException.class).isThrownBy(gateway::run)
			.satisfies((ex) -> assertThat(ex.getRouteId()).isEqualTo("items"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Route 'items': RequestRateLimiter names bucket 'apu' by ratelimit.bucket, "
					+ "but no ratelimit.buckets.apu entry defines it.")
			.contains("Define it (e.g. ratelimit.buckets.apu.limit=100 and ratelimit.buckets.apu.window=1m), "
					+ "or set the filter argument ratelimit.bucket to a defined bucket: [api].");
	}

}
