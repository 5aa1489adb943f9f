package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link RedisScriptCalls}: how a failed call reaches the store's caller.
 */
class RedisScriptCallsTests {

	private static final RedisDecisionProtocol.Call CALL = new RedisDecisionProtocol.Call(new String[] { "k" },
			new String[] { "a" });

	@Test
	void aCallLettuceCancelledWithItsReplacedConnectionFailsAsNotSentOnAReconnect() {
		// Lettuce cancels the calls still buffered on a connection that closes: waited
		// for on the caller's thread, the cancellation is not wrapped.
		CompletableFuture<List<Object>> reply = new CompletableFuture<>();
		reply.completeExceptionally(new CancellationException());
		RedisScriptCalls calls = new RedisScriptCalls(new StubScriptRunner((keys, args) -> reply),
				Duration.ofMillis(100), Duration.ofMillis(100));
		assertThatExceptionOfType(StoreReconnectedException.class).isThrownBy(() -> calls.call(CALL))
			.satisfies((ex) -> assertThat(ex.mayHaveRun()).isFalse())
			.withMessageContaining("not sent");
		CompletableFuture<List<Object>> cancelled = new CompletableFuture<>();
		cancelled.cancel(false);
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> new RedisScriptCalls(new StubScriptRunner((keys, args) -> cancelled),
					Duration.ofMillis(100), Duration.ofMillis(100))
				.call(CALL));
	}

}
