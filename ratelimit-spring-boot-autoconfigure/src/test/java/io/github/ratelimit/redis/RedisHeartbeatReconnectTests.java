package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.StoreReconnectedException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A heartbeat that waited while the store's connection was made anew, and so was not
 * sent, is sent again at once: it is the check for lost data that a new connection calls
 * for, which decisions wait for. Failing it sent every waiting decision to the failure
 * mode.
 */
class RedisHeartbeatReconnectTests {

	@Test
	void aHeartbeatNotSentBecauseTheConnectionWasMadeAnewIsSentAgain() {
		AtomicInteger calls = new AtomicInteger();
		ScriptRunner runner = new StubScriptRunner((keys, args) -> {
			if (calls.getAndIncrement() == 0) {
				return CompletableFuture
					.failedFuture(new StoreReconnectedException("The connection was made anew; not sent", null));
			}
			return CompletableFuture.completedFuture(List.of(2L, 0L, "epoch", 0L));
		});
		try (RedisRateLimitStore store = RedisRateLimitStore.builder((script, connectTimeout, timeout) -> runner)
			.build()) {
			Heartbeat heartbeat = store.heartbeat(Duration.ofSeconds(1));
			assertThat(heartbeat.instances()).isEqualTo(2);
			assertThat(heartbeat.epoch()).isEqualTo("epoch");
			assertThat(calls).hasValue(2);
		}
	}

}
