package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.health.RateLimitHealthIndicator;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.ratelimit.testsupport.redis.TcpProxy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each way Redis can fail at startup, on a real {@code redis-server}, is named by its
 * cause in the first line of the startup log, the failure analysis and the health
 * details: a permanent one (authentication, ACL, unknown host) fails startup when
 * {@code ratelimit.store=redis}, and is a WARN that says limits are per instance now when
 * Redis is optional. TLS trust is classified in {@code RedisFailureCauseTests} only.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisStartupFailureTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitHealthContributorAutoConfiguration.class, DataRedisAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				"ratelimit.redis.connect-timeout=2s");

	@BeforeAll
	static void users() {
		redis.server().command("ACL", "SETUSER", "app", "on", ">right", "~*", "&*", "+@all");
		redis.server().command("ACL", "SETUSER", "noscript", "on", ">right", "~*", "&*", "+@all", "-script");
		redis.server().command("ACL", "SETUSER", "noevalsha", "on", ">right", "~*", "&*", "+@all", "-evalsha");
	}

	private ApplicationContextRunner as(String user, String password) {
		return this.runner.withPropertyValues("spring.data.redis.username=" + user,
				"spring.data.redis.password=" + password);
	}

	@Test
	void aRightPasswordStartsOnRedis() {
		as("app", "right").withPropertyValues("ratelimit.store=redis").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(health(context).getDetails()).containsEntry("state", "healthy").doesNotContainKey("lastFailure");
		});
	}

	@Test
	void aWrongPasswordFailsARequiredStoreNamingAuthentication() {
		assertWrongPasswordFailsStartup(as("app", "wrong"));
	}

	/**
	 * Lettuce reports a refused login whose channel closed first as "Connection closed
	 * prematurely", not as the refusal: the store tries such a login once more, so a
	 * wrong password still fails startup, and a right one starts on Redis.
	 */
	@Test
	void aLoginCutShortIsTriedOnceMore() {
		try (TcpProxy proxy = new TcpProxy(redis.host(), redis.port())) {
			proxy.cutOnFirstRequest(1);
			assertWrongPasswordFailsStartup(
					as("app", "wrong").withPropertyValues("spring.data.redis.port=" + proxy.port()));
			proxy.cutOnFirstRequest(1);
			as("app", "right").withPropertyValues("ratelimit.store=redis", "spring.data.redis.port=" + proxy.port())
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(health(context).getDetails()).containsEntry("state", "healthy");
				});
		}
	}

	/**
	 * Two logins cut short, as when the second loses Lettuce's race between closing a
	 * refused login and reporting the refusal (a full build saw a wrong password start a
	 * required store that way): the third login is refused, and startup fails.
	 */
	@Test
	void twoLoginsCutShortInARowAreTriedAgain() {
		try (TcpProxy proxy = new TcpProxy(redis.host(), redis.port())) {
			proxy.cutOnFirstRequest(2);
			assertWrongPasswordFailsStartup(
					as("app", "wrong").withPropertyValues("spring.data.redis.port=" + proxy.port()));
		}
	}

	@Test
	void aWrongPasswordFailsARequiredStoreOnJedisAlike() {
		assertWrongPasswordFailsStartup(as("app", "wrong").withClassLoader(new FilteredClassLoader("io.lettuce")));
	}

	private static void assertWrongPasswordFailsStartup(ApplicationContextRunner runner) {
		runner.withPropertyValues("ratelimit.store=redis").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Redis authentication failed (")
				.contains("WRONGPASS")
				.contains("ratelimit.store is 'redis'");
			assertThat(analysis.getAction()).contains("spring.data.redis.password").contains("ratelimit.store=auto");
		});
	}

	@Test
	void aWrongPasswordWithRedisOptionalIsAWarningThatLimitsArePerInstance(CapturedOutput output) {
		as("app", "wrong").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(storeWarning(output, "Redis authentication failed (RedisCommandExecutionException: WRONGPASS"))
				.contains("limits are per instance now");
			assertThat(output).doesNotContain("not reachable");
			assertThat(health(context).getDetails()).containsEntry("state", "degraded")
				.hasEntrySatisfying("lastFailure",
						(failure) -> assertThat((String) failure).startsWith("Redis authentication failed ("));
		});
	}

	@Test
	void aUserWithoutScriptLoadFailsStartupNamingTheAcl() {
		as("noscript", "right").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith(
					"Redis ACL refused a command the rate limit store needs (RedisCommandExecutionException: NOPERM ")
				.contains("SCRIPT LOAD");
			assertThat(analysis.getAction()).contains("ACL SETUSER");
		});
	}

	@Test
	void aUserWithoutEvalshaFailsStartupNamingTheAcl() {
		as("noevalsha", "right").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith(
					"Redis ACL refused a command the rate limit store needs (RedisCommandExecutionException: NOPERM ")
				.contains("evalsha")
				.contains("EVALSHA");
		});
	}

	@Test
	void aUserWithoutEvalshaFailsStartupOnJedisAlike() {
		as("noevalsha", "right").withClassLoader(new FilteredClassLoader("io.lettuce")).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Redis ACL refused a command the rate limit store needs (")
				.contains("NOPERM")
				.contains("EVALSHA");
		});
	}

	@Test
	void anUnknownHostFailsARequiredStoreAndWarnsOtherwise(CapturedOutput output) {
		ApplicationContextRunner unknown = this.runner
			.withPropertyValues("spring.data.redis.host=no-such-host.invalid");
		unknown.withPropertyValues("ratelimit.store=redis").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Redis host unknown (");
			assertThat(analysis.getAction()).contains("spring.data.redis.host");
		});
		unknown.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(storeWarning(output, "Redis host unknown (")).isNotEmpty();
		});
	}

	@Test
	void aRefusedConnectionIsNotPermanentSoEvenARequiredStoreStarts(CapturedOutput output) {
		this.runner
			.withPropertyValues("spring.data.redis.port=" + RedisStoreAutoConfigurationTests.unusedPort(),
					"ratelimit.store=redis")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(storeWarning(output, "Redis refused the connection ("))
					.contains("limits are per instance now");
				assertThat(health(context).getDetails()).hasEntrySatisfying("lastFailure",
						(failure) -> assertThat((String) failure).startsWith("Redis refused the connection ("));
			});
	}

	@Test
	void aStalledServerIsATimeout(CapturedOutput output) {
		redis.server().pause();
		try {
			this.runner.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.connect-timeout=500ms")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(storeWarning(output,
							"Redis timed out: no connection within 500ms (ratelimit.redis.connect-timeout)"))
						.isNotEmpty();
				});
		}
		finally {
			redis.server().resume();
		}
	}

	@Test
	void anUntrustedCertificateFailsARequiredStoreNamingTlsTrustAndABundleFixesIt(@TempDir Path dir) throws Exception {
		int tlsPort = RedisStoreAutoConfigurationTests.unusedPort();
		Path cert = dir.resolve("cert.pem");
		Path key = dir.resolve("key.pem");
		openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext",
				"subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key.toString(), "-out", cert.toString());
		redis.server()
			.command("CONFIG", "SET", "tls-cert-file", cert.toString(), "tls-key-file", key.toString(),
					"tls-ca-cert-file", cert.toString(), "tls-auth-clients", "no");
		redis.server().command("CONFIG", "SET", "tls-port", Integer.toString(tlsPort));
		try {
			ApplicationContextRunner tls = this.runner
				.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
				.withPropertyValues("spring.data.redis.host=localhost", "spring.data.redis.port=" + tlsPort,
						"spring.data.redis.ssl.enabled=true", "ratelimit.store=redis");
			tls.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).startsWith("Redis TLS certificate not trusted (");
				assertThat(analysis.getAction()).contains("spring.data.redis.ssl.bundle");
			});
			tls.withPropertyValues("spring.ssl.bundle.pem.redis.truststore.certificate=file:" + cert,
					"spring.data.redis.ssl.bundle=redis")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(health(context).getDetails()).containsEntry("state", "healthy");
				});
		}
		finally {
			redis.server().command("CONFIG", "SET", "tls-port", "0");
		}
	}

	private static void openssl(String... args) throws Exception {
		List<String> command = new ArrayList<>();
		command.add("openssl");
		command.addAll(List.of(args));
		Process process;
		try {
			process = new ProcessBuilder(command).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			throw new AssertionError("This test makes its TLS certificate with openssl, which is not on the PATH ("
					+ ex.getMessage() + "): install it (Debian: apt-get install openssl)", ex);
		}
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor()).as(output).isZero();
	}

	private static Health health(AssertableApplicationContext context) {
		return context.getBean(RateLimitHealthIndicator.class).health();
	}

	private static FailureAnalysis analyze(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = new RedisStoreUnavailableFailureAnalyzer().analyze(context.getStartupFailure());
		assertThat(analysis).as("analysis of %s", context.getStartupFailure()).isNotNull();
		System.out.println("Description: " + analysis.getDescription() + "\nAction: " + analysis.getAction());
		return analysis;
	}

	/**
	 * The line the Redis store logged at WARN with {@code message}, whatever the layout
	 * of the log (logback's default, or Spring Boot's once a test of the same JVM started
	 * an application).
	 */
	private static String storeWarning(CapturedOutput output, String message) {
		return output.toString()
			.lines()
			.filter((line) -> line.contains(message) && line.contains("WARN") && line.contains("RedisRateLimitStore"))
			.findFirst()
			.orElseThrow(
					() -> new AssertionError("No WARN of RedisRateLimitStore with '" + message + "' in:\n" + output));
	}

}
