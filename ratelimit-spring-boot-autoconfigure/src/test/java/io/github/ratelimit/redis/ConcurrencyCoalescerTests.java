package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.store.RateLimitStoreException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link ConcurrencyCoalescer} on a runner whose calls the test completes by hand: which
 * operations share a call, in what order, and that every operation gets an outcome. The
 * store's tests ({@code RedisConcurrencyStoreTests},
 * {@code RedisClusterConcurrencyStoreTests}) run the batches on a real Redis.
 */
class ConcurrencyCoalescerTests {

	private final HandCompletedRunner runner = new HandCompletedRunner();

	private final RedisScriptCalls calls = new RedisScriptCalls(this.runner.runner, Duration.ofSeconds(1),
			Duration.ofSeconds(1));

	private final RedisDecisionProtocol protocol = new RedisDecisionProtocol(new RedisKeys("rl"), null, Duration.ZERO);

	@Test
	void onOneRedisOperationsOnAnyKeyThatArriveDuringACallGoInTheNextOneEachKeyNamedOnce() {
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(this.calls, this.protocol, () -> true);
		CompletableFuture<List<Object>> alone = acquire(coalescer, "alice", "h1");
		CompletableFuture<List<Object>> bob = acquire(coalescer, "bob", "h2");
		CompletableFuture<List<Object>> release = coalescer.submit("r", "exports", "alice", "h1", 0, 0, true);
		CompletableFuture<List<Object>> carol = acquire(coalescer, "carol", "h3");
		assertThat(this.runner.calls).hasSize(1);
		assertThat(this.runner.calls.get(0).keys).containsExactly("rl:{exports:alice}:cc");
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		assertThat(alone).isCompletedWithValue(List.of(1L, 1L, 0L, 0L));
		Call batch = this.runner.calls.get(1);
		assertThat(batch.keys).containsExactly("rl:{exports:bob}:cc", "rl:{exports:alice}:cc", "rl:{exports:carol}:cc");
		assertThat(Arrays.asList(batch.args).subList(0, 3)).containsExactly("k", "b", "3");
		assertThat(Arrays.asList(batch.args).subList(7, batch.args.length)).containsExactly("a", "1", "h2", "2",
				"30000000", "r", "2", "h1", "0", "0", "a", "3", "h3", "2", "30000000");
		this.runner.reply(1, List.of(List.of(1L, 1L, 0L, 0L), List.of(1L), List.of(0L, 2L, 0L, 900L)));
		assertThat(bob).isCompletedWithValue(List.of(1L, 1L, 0L, 0L));
		assertThat(release).isCompletedWithValue(List.of(1L));
		assertThat(carol).isCompletedWithValue(List.of(0L, 2L, 0L, 900L));
		assertThat(coalescer.calls()).isEqualTo(2);
		assertThat(coalescer.coalesced()).isEqualTo(3);
	}

	@Test
	void onOneRedisWithTwoConnectionsEachHoldersOperationsGoOverOneOfThemInOrder() {
		HandCompletedRunner second = new HandCompletedRunner();
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(
				List.of(this.calls, new RedisScriptCalls(second.runner, Duration.ofSeconds(1), Duration.ofSeconds(1))),
				this.protocol, () -> true);
		// Holders whose hashes fall on each connection.
		List<String> holders = new ArrayList<>();
		for (int i = 0; holders.size() < 2; i++) {
			String holder = "h" + i;
			if (Math.floorMod(holder.hashCode(), 2) == holders.size()) {
				holders.add(holder);
			}
		}
		acquire(coalescer, "alice", holders.get(0));
		acquire(coalescer, "bob", holders.get(1));
		assertThat(this.runner.calls).as("the first connection's lane, idle: sent at once").hasSize(1);
		assertThat(second.calls).as("the second connection's lane, idle too").hasSize(1);
		// Each holder's release waits for its own connection's call, behind its acquire.
		coalescer.submit("r", "exports", "alice", holders.get(0), 0, 0, true);
		coalescer.submit("r", "exports", "bob", holders.get(1), 0, 0, true);
		assertThat(this.runner.calls).hasSize(1);
		assertThat(second.calls).hasSize(1);
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		second.reply(0, List.of(1L, 1L, 0L, 0L));
		assertThat(this.runner.calls.get(1).args).contains("r", holders.get(0)).doesNotContain(holders.get(1));
		assertThat(second.calls.get(1).args).contains("r", holders.get(1)).doesNotContain(holders.get(0));
	}

	@Test
	void onAClusterEachKeyHasALaneOfItsOwnSinceACallsKeysMustShareASlot() {
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(this.calls, this.protocol, () -> false);
		acquire(coalescer, "alice", "h1");
		acquire(coalescer, "bob", "h2");
		acquire(coalescer, "alice", "h3");
		assertThat(this.runner.calls).as("bob's goes at once; alice's second waits for her first")
			.extracting((call) -> List.of(call.keys))
			.containsExactly(List.of("rl:{exports:alice}:cc"), List.of("rl:{exports:bob}:cc"));
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		assertThat(this.runner.calls.get(2).keys).containsExactly("rl:{exports:alice}:cc");
	}

	@Test
	void anOperationWhoseCallerGaveUpBeforeItsCallWentIsLeftOutNotLeftHoldingAPermit() {
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(this.calls, this.protocol, () -> true);
		acquire(coalescer, "alice", "h1");
		CompletableFuture<List<Object>> gaveUp = acquire(coalescer, "bob", "h2");
		CompletableFuture<List<Object>> waits = acquire(coalescer, "carol", "h3");
		gaveUp.completeExceptionally(new RateLimitStoreException("timed out", null, true));
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		assertThat(this.runner.calls.get(1).keys).as("a call of one, as a single operation")
			.containsExactly("rl:{exports:carol}:cc");
		assertThat(this.runner.calls.get(1).args[1]).isEqualTo("a");
		this.runner.reply(1, List.of(1L, 1L, 0L, 0L));
		assertThat(waits).isCompletedWithValue(List.of(1L, 1L, 0L, 0L));
		acquire(coalescer, "dave", "h4");
		CompletableFuture<List<Object>> nobody = acquire(coalescer, "erin", "h5");
		nobody.completeExceptionally(new RateLimitStoreException("timed out", null, true));
		this.runner.reply(2, List.of(1L, 1L, 0L, 0L));
		assertThat(this.runner.calls).as("no call for a batch nobody waits for").hasSize(3);
		acquire(coalescer, "frank", "h6");
		assertThat(this.runner.calls).as("the lane goes on").hasSize(4);
	}

	@Test
	void operationsLeftOutOfABatchLeaveTheOthersTheirOwnReplies() {
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(this.calls, this.protocol, () -> true);
		acquire(coalescer, "alice", "h1");
		CompletableFuture<List<Object>> bob = acquire(coalescer, "bob", "h2");
		CompletableFuture<List<Object>> gaveUp = acquire(coalescer, "carol", "h3");
		CompletableFuture<List<Object>> dave = acquire(coalescer, "dave", "h4");
		CompletableFuture<List<Object>> erin = acquire(coalescer, "erin", "h5");
		gaveUp.completeExceptionally(new RateLimitStoreException("timed out", null, true));
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		assertThat(this.runner.calls.get(1).keys).containsExactly("rl:{exports:bob}:cc", "rl:{exports:dave}:cc",
				"rl:{exports:erin}:cc");
		this.runner.reply(1, List.of(List.of(1L, 1L, 0L, 0L), List.of(1L, 2L, 0L, 0L), List.of(0L, 2L, 0L, 500L)));
		assertThat(bob).isCompletedWithValue(List.of(1L, 1L, 0L, 0L));
		assertThat(dave).isCompletedWithValue(List.of(1L, 2L, 0L, 0L));
		assertThat(erin).isCompletedWithValue(List.of(0L, 2L, 0L, 500L));
	}

	@Test
	void aWaitThatEndsAfterItsCallWentFailsAsACallRedisMayHaveRunOneThatEndsBeforeAsOneNeverSent() {
		RedisScriptCalls impatient = new RedisScriptCalls(this.runner.runner, Duration.ofMillis(1),
				Duration.ofMillis(1));
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(impatient, this.protocol, () -> true);
		// The runner never answers: the first waits in vain for its sent call, the second
		// for the first's to return.
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> coalescer.run("a", "exports", "alice", "h1", 2, 30_000_000))
			.matches(RateLimitStoreException::mayHaveRun);
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> coalescer.run("a", "exports", "bob", "h2", 2, 30_000_000))
			.matches((ex) -> !ex.mayHaveRun());
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		assertThat(this.runner.calls).as("the second was left out").hasSize(1);
	}

	@Test
	void aCallThatCouldNotBeSentFailsItsOperationAsOneNeverSent() {
		ScriptRunner refused = new StubScriptRunner(
				(keys, args) -> CompletableFuture.failedFuture(new IllegalStateException("Connection refused")));
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(
				new RedisScriptCalls(refused, Duration.ofSeconds(5), Duration.ofSeconds(5)), this.protocol, () -> true);
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> coalescer.run("r", "exports", "alice", "h1", 0, 0))
			.matches((ex) -> !ex.mayHaveRun())
			.withMessageNotContaining("may have run");
	}

	@Test
	void callsThatFailAtOnceUnderLoadNeitherDeepenTheStackNorStopTheLane() throws Exception {
		ScriptRunner failing = new StubScriptRunner(
				(keys, args) -> CompletableFuture.failedFuture(new IllegalStateException("connection closed")));
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(
				new RedisScriptCalls(failing, Duration.ofSeconds(5), Duration.ofSeconds(5)), this.protocol, () -> true);
		ExecutorService threads = Executors.newFixedThreadPool(32);
		try {
			List<Future<Integer>> failed = new ArrayList<>();
			for (int t = 0; t < 32; t++) {
				failed.add(threads.submit(() -> {
					int failures = 0;
					for (int i = 0; i < 2_000; i++) {
						try {
							coalescer.run("a", "exports", "k" + i, "h" + i, 2, 30_000_000);
						}
						catch (RateLimitStoreException ex) {
							failures++;
						}
					}
					return failures;
				}));
			}
			for (Future<Integer> done : failed) {
				assertThat(done.get(2, TimeUnit.MINUTES)).isEqualTo(2_000);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThatExceptionOfType(RateLimitStoreException.class).as("the lane goes on")
			.isThrownBy(() -> coalescer.run("a", "exports", "next", "h", 2, 30_000_000));
	}

	@Test
	void aFailedCallFailsEachOfItsOperationsAndTheLaneGoesOn() {
		ConcurrencyCoalescer coalescer = new ConcurrencyCoalescer(this.calls, this.protocol, () -> true);
		acquire(coalescer, "alice", "h1");
		List<CompletableFuture<List<Object>>> batch = List.of(acquire(coalescer, "bob", "h2"),
				acquire(coalescer, "carol", "h3"));
		this.runner.reply(0, List.of(1L, 1L, 0L, 0L));
		this.runner.calls.get(1).reply.completeExceptionally(new IllegalStateException("connection lost"));
		assertThat(batch)
			.allSatisfy((operation) -> assertThat(operation.handle((reply, ex) -> ex)).succeedsWithin(Duration.ZERO)
				.isInstanceOf(RateLimitStoreException.class));
		CompletableFuture<List<Object>> next = acquire(coalescer, "dave", "h4");
		assertThat(this.runner.calls).hasSize(3);
		this.runner.reply(2, List.of(1L, 1L, 0L, 0L));
		assertThat(next).isCompleted();
	}

	private static CompletableFuture<List<Object>> acquire(ConcurrencyCoalescer coalescer, String key, String holder) {
		return coalescer.submit("a", "exports", key, holder, 2, 30_000_000, true);
	}

	private record Call(String[] keys, String[] args, CompletableFuture<List<Object>> reply) {

	}

	/** Records each call; the test completes its reply. */
	private static final class HandCompletedRunner {

		final List<Call> calls = new ArrayList<>();

		final ScriptRunner runner = new StubScriptRunner((keys, args) -> {
			Call call = new Call(keys, args, new CompletableFuture<>());
			this.calls.add(call);
			return call.reply;
		});

		void reply(int call, List<Object> reply) {
			this.calls.get(call).reply.complete(reply);
		}

	}

}
