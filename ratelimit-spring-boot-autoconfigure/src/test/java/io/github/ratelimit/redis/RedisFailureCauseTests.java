package io.github.ratelimit.redis;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.security.cert.CertPathBuilderException;
import java.util.concurrent.CompletionException;

import javax.net.ssl.SSLHandshakeException;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.netty.channel.ConnectTimeoutException;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.redis.RedisFailureCause.Kind;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How failures are classified from their cause chains, as Lettuce, Jedis and the JDK
 * report them. Real servers: see {@code RedisStartupFailureTests}.
 */
class RedisFailureCauseTests {

	@Test
	void aRefusedLoginIsAuthenticationWhateverWrapsIt() {
		RedisFailureCause cause = RedisFailureCause.of(new CompletionException(new RedisConnectionException(
				"Unable to connect to localhost/<unresolved>:6379",
				new RedisCommandExecutionException("WRONGPASS invalid username-password pair or user is disabled."))));
		assertThat(cause.kind()).isEqualTo(Kind.AUTHENTICATION);
		assertThat(cause.isPermanent()).isTrue();
		assertThat(cause.describe()).startsWith("Redis authentication failed (RedisCommandExecutionException: "
				+ "WRONGPASS invalid username-password pair or user is disabled.)");
		assertThat(cause.fix()).contains("spring.data.redis.password");
		assertThat(RedisFailureCause.of(new RuntimeException("NOAUTH Authentication required.")).kind())
			.isEqualTo(Kind.AUTHENTICATION);
	}

	@Test
	void anAclRefusalIsAuthorisation() {
		RedisFailureCause cause = RedisFailureCause
			.of(new RedisCommandExecutionException("NOPERM User app has no permissions to run the 'evalsha' command"));
		assertThat(cause.kind()).isEqualTo(Kind.AUTHORIZATION);
		assertThat(cause.describe()).startsWith(
				"Redis ACL refused a command the rate limit store needs (RedisCommandExecutionException: NOPERM");
		assertThat(cause.fix()).contains("ACL SETUSER");
	}

	@Test
	void anUntrustedCertificateIsTlsTrust() {
		SSLHandshakeException handshake = new SSLHandshakeException(
				"PKIX path building failed: unable to find valid certification path to requested target");
		handshake.initCause(new CertPathBuilderException("unable to find valid certification path"));
		RedisFailureCause cause = RedisFailureCause.of(new RedisConnectionException("Unable to connect", handshake));
		assertThat(cause.kind()).isEqualTo(Kind.TLS_TRUST);
		assertThat(cause.describe()).startsWith("Redis TLS certificate not trusted");
		assertThat(cause.fix()).contains("spring.data.redis.ssl.bundle");
	}

	@Test
	void networkFailuresAreNamed() {
		assertThat(RedisFailureCause.of(new RedisConnectionException("x", new UnknownHostException("nohost"))).kind())
			.isEqualTo(Kind.UNKNOWN_HOST);
		assertThat(RedisFailureCause.of(new RedisConnectionException("x", new ConnectException("Connection refused")))
			.kind()).isEqualTo(Kind.CONNECTION_REFUSED);
		assertThat(RedisFailureCause.of(new RedisConnectionException("x", new ConnectTimeoutException("timed out")))
			.kind()).as("Netty's connect timeout is a ConnectException too").isEqualTo(Kind.TIMEOUT);
		assertThat(RedisFailureCause.of(new SocketTimeoutException("Read timed out")).kind()).isEqualTo(Kind.TIMEOUT);
		assertThat(RedisFailureCause.of(new RedisCommandTimeoutException("Command timed out")).kind())
			.isEqualTo(Kind.TIMEOUT);
		assertThat(Kind.CONNECTION_REFUSED.isPermanent()).isFalse();
		assertThat(Kind.TIMEOUT.isPermanent()).isFalse();
		assertThat(Kind.UNKNOWN_HOST.isPermanent()).isTrue();
	}

	@Test
	void aReadOnlyReplicaAndAnythingElseAreNamedToo() {
		assertThat(RedisFailureCause
			.of(new RedisCommandExecutionException("READONLY You can't write against a read only replica."))
			.kind()).isEqualTo(Kind.READ_ONLY_REPLICA);
		RedisFailureCause other = RedisFailureCause.of(new IllegalStateException("boom"));
		assertThat(other.kind()).isEqualTo(Kind.OTHER);
		assertThat(other.describe()).isEqualTo("Redis failed (IllegalStateException: boom)");
	}

	@Test
	void aCauseChainWithACycleEnds() {
		RuntimeException first = new RuntimeException("first");
		RuntimeException second = new RuntimeException("second", first);
		first.initCause(second);
		assertThat(RedisFailureCause.of(first).kind()).isEqualTo(Kind.OTHER);
	}

}
