package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DecisionCoalescer} on a script whose calls the test completes by hand: however a
 * call ends, each of its requests gets an outcome and the lane goes on to the next call.
 * The store's tests ({@code RedisCoalescingTests}) cover the decisions on a real Redis.
 */
class DecisionCoalescerTests {

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(10, Duration.ofMinutes(1), Algorithm.GCRA));

	private final HandCompletedScript script = new HandCompletedScript();

	private final DecisionCoalescer coalescer = new DecisionCoalescer(this.script);

	@Test
	void requestsArrivingWhileACallIsInFlightGoTogetherInTheNextCall() {
		CompletableFuture<Decision> alone = decide();
		CompletableFuture<Decision> second = decide();
		CompletableFuture<Decision> third = decide();
		assertThat(this.script.calls).hasSize(1);
		this.script.reply(0);
		assertThat(alone).isCompleted();
		assertThat(this.script.calls).hasSize(2);
		assertThat(this.script.calls.get(1).batch).hasSize(2);
		this.script.reply(1);
		assertThat(second).isCompletedWithValueMatching(Decision::allowed);
		assertThat(third).isCompletedWithValueMatching(Decision::allowed);
		assertThat(this.coalescer.coalesced()).isEqualTo(2);
	}

	@Test
	void anErrorWhileAReplyIsReadFailsItsRequestsAndTheLaneGoesOn() {
		List<CompletableFuture<Decision>> batch = aBatchOfTwoInFlight();
		// A reply whose reading throws an Error, not an exception (a stack or heap
		// exhausted on the I/O thread).
		this.script.errorOnRead = new StackOverflowError();
		this.script.reply(1);
		assertThat(batch)
			.allSatisfy((request) -> assertThat(request.handle((decision, ex) -> ex)).succeedsWithin(Duration.ZERO)
				.isInstanceOf(RateLimitStoreException.class));
		this.script.errorOnRead = null;
		assertTheLaneGoesOn();
	}

	@Test
	void aFailedCallFailsEachOfItsRequestsAndTheLaneGoesOn() {
		List<CompletableFuture<Decision>> batch = aBatchOfTwoInFlight();
		this.script.calls.get(1).reply.completeExceptionally(new IllegalStateException("connection lost"));
		assertThat(batch).allSatisfy((request) -> assertThat(request).isCompletedExceptionally());
		assertTheLaneGoesOn();
	}

	@Test
	void requestsThatWaitedWhileTheConnectionWasMadeAnewAreNotSentOnIt() {
		decide();
		List<CompletableFuture<Decision>> waited = List.of(decide(), decide());
		// The first call fails as the connection drops; a new one is made before the two
		// that waited are sent. Their callers checked Redis for lost data before: they
		// fail, not sent, and are made again after a check.
		this.script.reconnects++;
		this.script.calls.get(0).reply.completeExceptionally(new IllegalStateException("connection lost"));
		assertThat(this.script.calls).as("nothing sent on the new connection").hasSize(1);
		assertThat(waited)
			.allSatisfy((request) -> assertThat(request.handle((decision, ex) -> ex)).succeedsWithin(Duration.ZERO)
				.isInstanceOf(StoreReconnectedException.class));
		CompletableFuture<Decision> next = decide();
		assertThat(this.script.calls).as("a request begun since is sent").hasSize(2);
		this.script.reply(1);
		assertThat(next).isCompletedWithValueMatching(Decision::allowed);
	}

	/**
	 * Sends one request alone and two behind it, answers the first: the two are then in
	 * flight as the second call.
	 */
	private List<CompletableFuture<Decision>> aBatchOfTwoInFlight() {
		decide();
		List<CompletableFuture<Decision>> batch = List.of(decide(), decide());
		this.script.reply(0);
		assertThat(this.script.calls).hasSize(2);
		return batch;
	}

	/**
	 * The next decision is sent and answered: a lane left in flight would have queued it
	 * behind a call that had ended, for good.
	 */
	private void assertTheLaneGoesOn() {
		CompletableFuture<Decision> next = decide();
		assertThat(this.script.calls).hasSize(3);
		this.script.reply(2);
		assertThat(next).isCompletedWithValueMatching(Decision::allowed);
	}

	private CompletableFuture<Decision> decide() {
		return this.coalescer.decide("api", "alice", LIMITS, 1, RateLimitStore.NO_MAX_DELAY, true);
	}

	/**
	 * Records each call; the test completes its reply. Every request is allowed.
	 */
	private static final class HandCompletedScript implements DecisionCoalescer.Script {

		private final List<Call> calls = new ArrayList<>();

		private Error errorOnRead;

		private long reconnects;

		void reply(int call) {
			this.calls.get(call).reply.complete(List.of());
		}

		@Override
		public CompletableFuture<List<Object>> send(DecisionCoalescer.LaneKey lane,
				List<DecisionCoalescer.Request> batch, boolean async, Consumer<List<Object>> lateReply) {
			Call call = new Call(List.copyOf(batch), new CompletableFuture<>());
			this.calls.add(call);
			return call.reply;
		}

		@Override
		public List<Decision> decisions(List<Object> reply, List<DecisionCoalescer.Request> batch,
				List<LimitSpec> limits) {
			if (this.errorOnRead != null) {
				throw this.errorOnRead;
			}
			List<Decision> decisions = new ArrayList<>();
			for (int i = 0; i < batch.size(); i++) {
				decisions.add(Decision.allowed(limits.get(0), 9 - i, 6_000_000, 0));
			}
			return decisions;
		}

		@Override
		public RuntimeException failure(Throwable cause) {
			// As the store: its own exceptions as they are.
			return (cause instanceof RateLimitStoreException storeFailure) ? storeFailure
					: new RateLimitStoreException("Redis rate limit call failed: " + cause, cause, false);
		}

		@Override
		public long reconnects() {
			return this.reconnects;
		}

		@Override
		public void giveBack(DecisionCoalescer.LaneKey lane, long cost) {
		}

		private record Call(List<DecisionCoalescer.Request> batch, CompletableFuture<List<Object>> reply) {

		}

	}

}
