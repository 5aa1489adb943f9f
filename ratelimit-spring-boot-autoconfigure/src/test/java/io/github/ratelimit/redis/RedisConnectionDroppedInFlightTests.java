package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.ratelimit.testsupport.redis.TcpProxy;

import static io.github.ratelimit.redis.RedisClusterMasterLossTests.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calls in flight when the store's connection drops (a network cut, {@code CLIENT KILL})
 * while Redis stays up, through the failover store in {@code fallback} mode: they are
 * decided by Redis on the new connection, not by this instance's fallback, which would
 * admit its share of the limit again (the failover store is wired to check Redis for lost
 * data after a reconnect, as the auto-configuration wires it). The connection goes
 * through a {@link TcpProxy} that holds the call (Redis never saw it) or its reply (Redis
 * ran it), then cuts it. Lettuce's own reconnect is put off for a minute, so the store's
 * replacement is what answers.
 */
class RedisConnectionDroppedInFlightTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final List<LimitSpec> LIMITS = List
		.of(LimitSpec.builder().limit(10).window(Duration.ofHours(1)).algorithm(Algorithm.SLIDING_LOG).build());

	private TcpProxy proxy;

	private ClientResources resources;

	private RedisClient client;

	private RedisRateLimitStore primary;

	private FailoverRateLimitStore store;

	@BeforeEach
	void connect() {
		this.proxy = new TcpProxy(redis.host(), redis.port());
		this.resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMinutes(1))).build();
		this.client = RedisClient.create(this.resources, RedisURI.create("127.0.0.1", this.proxy.port()));
		// Long enough that no call fails by its timeout here.
		this.primary = RedisRateLimitStore.builder(this.client).timeout(Duration.ofSeconds(5)).build();
		this.primary.start(Duration.ofSeconds(10));
		this.store = FailoverRateLimitStore.builder(this.primary, InMemoryRateLimitStore.builder().build())
			.failureMode(FailureMode.FALLBACK)
			.build();
		// Wired as the auto-configuration's heartbeat does: after the connection is made
		// anew, the next decision waits for a check for lost data.
		this.store.checkDataWith(() -> {
			try {
				this.store.heartbeat(this.primary.heartbeat(Duration.ofSeconds(2)));
			}
			catch (RuntimeException ex) {
				this.store.heartbeatFailed(ex);
			}
		});
		this.primary.onReconnect(this.store::primaryReconnected);
	}

	@AfterEach
	void disconnect() {
		this.store.close();
		this.client.shutdown();
		this.resources.shutdown();
		this.proxy.close();
	}

	@Test
	void aCallRedisNeverSawIsDecidedByRedisOnTheNewConnection() {
		Decision decision = decideAcrossACut("unseen", this.proxy::holdRequests, () -> {
			long before = this.proxy.bytesFromClients();
			return () -> this.proxy.bytesFromClients() > before;
		});
		assertThat(decision.remaining()).as("counted once").isEqualTo(9);
	}

	@Test
	void aCallRedisRanIsCountedTwiceAtWorstAndAdmittedOnce() {
		Decision decision = decideAcrossACut("ran", this.proxy::holdReplies,
				() -> () -> redis.server().command("KEYS", "*ran*").contains("ran"));
		// The first call ran, its reply was lost, and the call was made again.
		assertThat(decision.remaining()).as("counted twice, admitted once").isEqualTo(8);
	}

	/**
	 * Decides on {@code key} while the proxy holds one direction ({@code hold}), cuts the
	 * connection once the condition {@code held} makes (after the warm-up, once holding)
	 * says the call is held, and returns the decision, which Redis made and which
	 * allowed.
	 */
	private Decision decideAcrossACut(String key, Consumer<Boolean> hold, Supplier<BooleanSupplier> held) {
		assertThat(this.store.decide("b", "warm", LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
		hold.accept(true);
		BooleanSupplier callHeld = held.get();
		CompletableFuture<Decision> inFlight = CompletableFuture
			.supplyAsync(() -> this.store.decide("b", key, LIMITS, 1));
		await(callHeld, Duration.ofSeconds(10));
		this.proxy.cutAll();
		hold.accept(false);
		Decision decision = inFlight.join();
		assertThat(decision.origin()).as("decided by Redis").isEqualTo(Decision.Origin.STORE);
		assertThat(decision.allowed()).isTrue();
		return decision;
	}

}
