package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A configuration mistake fails the sample's startup with Spring Boot's "APPLICATION
 * FAILED TO START" report (Description, Action) naming the property, not with a stack
 * trace whose useful line is the fifth {@code Caused by}.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureReportTests {

	@Test
	void aZeroWindowIsReportedNamingTheProperty(CapturedOutput output) {
		fail("--ratelimit.buckets.api.window=0s");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nratelimit.buckets.api.window: must be positive but was 0ms")
			.contains("Action:\n\nSet ratelimit.buckets.api.window to a value that is positive, "
					+ "e.g. ratelimit.buckets.api.window=1m, or remove it to use ratelimit.defaults.window.");
	}

	@Test
	void aMisspeltRequestPropertyInAFilterRuleIsReportedWithTheFix(CapturedOutput output) {
		fail("--ratelimit.filter.rules[0].key=#request.remoteAdr");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nratelimit.filter.rules[0].key '#request.remoteAdr': HttpServletRequest has no "
					+ "property 'remoteAdr'; did you mean '#request.remoteAddr'?")
			.contains("Action:\n\nChange ratelimit.filter.rules[0].key to read what HttpServletRequest offers, "
					+ "e.g. #request.remoteAddr.");
	}

	@Test
	void aMalformedTrustedProxyIsReportedNamingThePropertyAndTheValue(CapturedOutput output) {
		fail("--ratelimit.client-ip.trusted-proxies=10.0.0.0/8,10.0.0/8");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: ratelimit.client-ip.trusted-proxies")
			.contains("Value: \"[10.0.0.0/8, 10.0.0/8]\"")
			.contains("Reason: [1] '10.0.0/8' is not an IP address or CIDR range: '10.0.0' is not an IP address;"
					+ " write e.g. 10.0.0.0/8, 2001:db8::/32 or 192.168.1.10");
	}

	@Test
	void aRedisStoreWithoutRedisIsReportedWithWhatIsMissing(CapturedOutput output) {
		fail("--ratelimit.store=redis");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nratelimit.store is 'redis' but the application has no Redis rate limit store: "
					+ "there is no RedisConnectionFactory bean.")
			.contains("Action:\n\nSet spring.data.redis.host and spring.data.redis.port");
	}

	@Test
	void aBadStoreSettingIsReportedNamingTheProperty(CapturedOutput output) {
		fail("--spring.profiles.active=redis", "--spring.data.redis.port=1", "--ratelimit.breaker.window=0s");
		// Checked with every other setting when they are bound, and reported alike.
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: ratelimit.breaker.window\n    Value: \"PT0S\"\n    Reason: must be positive");
	}

	private static void fail(String... args) {
		SpringApplicationBuilder application = new SpringApplicationBuilder(SampleApplication.class)
			.web(WebApplicationType.SERVLET)
			.properties("spring.main.banner-mode=off");
		String[] arguments = java.util.Arrays.copyOf(args, args.length + 1);
		arguments[args.length] = "--server.port=0";
		assertThatException().isThrownBy(() -> application.run(arguments).close());
	}

}
