package io.github.ratelimit.redis;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * When {@link RedisRateLimitStore} gives up on Redis, and when it must not: a reply that
 * reached the socket while this process could not run is an answer, not a timeout; a
 * decision that ran in Redis after it timed out gives its permits back; a call that finds
 * the connection being made waits for it up to the connect timeout.
 */
class RedisRateLimitStoreTimingTests {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	/** One I/O thread, so that the test can hold the one the store's connection uses. */
	private static ClientResources resources;

	private static RedisClient client;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeAll
	static void connect() {
		resources = DefaultClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1).build();
		client = RedisClient.create(resources, RedisURI.create(redis.host(), redis.port()));
	}

	@AfterAll
	static void disconnect() {
		client.shutdown();
		resources.shutdown();
	}

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	private RedisRateLimitStore started(RedisRateLimitStore.Builder builder) {
		RedisRateLimitStore store = builder.build();
		this.closeables.add(store);
		store.start(Duration.ofSeconds(10));
		assertThat(store.isStarted()).isTrue();
		return store;
	}

	@Test
	void startConnectsLoadsTheScriptAndWarmsUpWithoutWritingAnything() {
		RedisRateLimitStore store = started(RedisRateLimitStore.builder(client).keyPrefix("start"));
		assertThat(redis.server().command("SCRIPT", "EXISTS", RedisRateLimitScript.load().sha1())).isEqualTo("1");
		assertThat(redis.server().command("KEYS", "start:*")).isEmpty();
		store.start();
		assertThat(store.isStarted()).isTrue();
	}

	@Test
	void aReplyThatArrivedWhileThisProcessCouldNotRunIsNotATimeout() throws Exception {
		RedisRateLimitStore store = started(RedisRateLimitStore.builder(client).keyPrefix("busy").timeout(TIMEOUT));
		List<LimitSpec> limits = List.of(LimitSpec.of(5, "1h", Algorithm.SLIDING_LOG));
		EventExecutor ioThread = ioThread();
		// The I/O thread sends the command, then cannot run for three timeouts: Redis
		// answers at once, the reply waits in the socket.
		CompletableFuture<Decision> sentThenBusy = store.decideAsync("busy", "k", limits, 1, Long.MAX_VALUE)
			.toCompletableFuture();
		ioThread.execute(() -> sleep(TIMEOUT.multipliedBy(3)));
		assertThat(sentThenBusy.get(10, TimeUnit.SECONDS).remaining()).isEqualTo(4);
		// Busy before the command is even sent: the clock starts when it is.
		ioThread.execute(() -> sleep(TIMEOUT.multipliedBy(3)));
		assertThat(store.decide("busy", "k", limits, 1).remaining()).isEqualTo(3);
		assertThat(store.lateRefunds()).isZero();
	}

	@Test
	void aDecisionThatRanInRedisAfterItTimedOutGivesItsPermitsBack() throws Exception {
		RedisRateLimitStore store = started(RedisRateLimitStore.builder(client).keyPrefix("late").timeout(TIMEOUT));
		List<LimitSpec> limits = List.of(LimitSpec.of(3, "1h", Algorithm.SLIDING_LOG));
		assertThat(store.decide("late", "k", limits, 1).remaining()).isEqualTo(2);
		CompletableFuture<String> sleep = redis.server().sleep(Duration.ofSeconds(1));
		assertThatExceptionOfType(RateLimitStoreException.class).isThrownBy(() -> store.decide("late", "k", limits, 1))
			.satisfies((ex) -> assertThat(ex.isTimeout()).isTrue())
			.withMessage("Redis did not answer within 100ms (ratelimit.redis.timeout)");
		assertThat(sleep.get(10, TimeUnit.SECONDS)).isEqualTo("OK");
		await(() -> store.lateRefunds() == 1, "the late decision's permits given back");
		assertThat(store.peek("late", "k", limits).remaining()).as("only the first decision holds a permit")
			.isEqualTo(2);
	}

	@Test
	void anAnsweredCallKeepsNothingReachableForTheRestOfItsTimeout() throws Exception {
		// A timeout far longer than the test: whatever the timers of an answered call
		// hold stays reachable until they run out, unless they are cancelled.
		RedisRateLimitStore store = started(
				RedisRateLimitStore.builder(client).keyPrefix("kept").timeout(Duration.ofMinutes(10)));
		List<LimitSpec> limits = List.of(LimitSpec.of(1000, "1h", Algorithm.TOKEN_BUCKET));
		List<WeakReference<Decision>> decisions = new ArrayList<>();
		List<CompletableFuture<Decision>> batch = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			batch.add(store.decideAsync("kept", "hot", limits, 1, Long.MAX_VALUE).toCompletableFuture());
		}
		for (CompletableFuture<Decision> decision : batch) {
			decisions.add(new WeakReference<>(decision.get(10, TimeUnit.SECONDS)));
		}
		decisions.add(new WeakReference<>(store.decide("kept", "alone", limits, 1)));
		assertThat(store.coalescedDecisions()).as("some decisions went in one call").isPositive();
		batch.clear();
		await(() -> {
			System.gc();
			return decisions.stream().allMatch((decision) -> decision.get() == null);
		}, "every answered decision to be unreachable");
	}

	@Test
	void aCallWaitsForTheConnectionBeingMadeUpToTheConnectTimeoutNotTheCommandTimeout() throws Exception {
		try (SilentServer silent = new SilentServer()) {
			RedisClient toSilent = RedisClient.create(resources,
					RedisURI.builder()
						.withHost("127.0.0.1")
						.withPort(silent.port())
						.withTimeout(Duration.ofSeconds(3))
						.build());
			this.closeables.add(toSilent::shutdown);
			RedisRateLimitStore store = RedisRateLimitStore.builder(toSilent)
				.timeout(Duration.ofMillis(50))
				.connectTimeout(Duration.ofMillis(600))
				.build();
			this.closeables.add(store);
			CompletableFuture<Decision> waiting = store
				.decideAsync("connect", "k", List.of(LimitSpec.of(1, "1m", Algorithm.GCRA)), 1, Long.MAX_VALUE)
				.toCompletableFuture();
			assertThat(waiting).failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.isInstanceOf(RateLimitStoreException.class)
				.withMessage("No Redis connection within 600ms (ratelimit.redis.connect-timeout)");
			store.start();
			assertThat(store.isStarted()).as("Redis never answered the handshake").isFalse();
		}
	}

	/** The I/O thread of the client's connections (there is one). */
	private static EventExecutor ioThread() throws Exception {
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			// A reply that comes before the callback is added runs it on this thread, not
			// the I/O thread: ask again.
			for (int attempt = 0; attempt < 1000; attempt++) {
				EventExecutor ioThread = connection.async()
					.ping()
					.thenApply((pong) -> ThreadExecutorMap.currentExecutor())
					.toCompletableFuture()
					.get(10, TimeUnit.SECONDS);
				if (ioThread != null) {
					return ioThread;
				}
			}
			throw new IllegalStateException("No ping reply completed on the I/O thread in 1000 tries");
		}
	}

	private static void await(BooleanSupplier condition, String what) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
			sleep(Duration.ofMillis(10));
		}
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Accepts connections and never answers: a stalled Redis as a new client sees it. */
	private static final class SilentServer implements AutoCloseable {

		private final ServerSocket socket;

		private final List<Socket> accepted = new ArrayList<>();

		private final Thread acceptor;

		SilentServer() throws IOException {
			this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			this.acceptor = new Thread(() -> {
				while (!this.socket.isClosed()) {
					try {
						Socket client = this.socket.accept();
						synchronized (this.accepted) {
							this.accepted.add(client);
						}
					}
					catch (IOException ex) {
						return;
					}
				}
			}, "silent-redis");
			this.acceptor.setDaemon(true);
			this.acceptor.start();
		}

		int port() {
			return this.socket.getLocalPort();
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
			synchronized (this.accepted) {
				for (Socket client : this.accepted) {
					client.close();
				}
			}
		}

	}

}
