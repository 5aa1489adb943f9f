package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.StoreReconnectedException;

/**
 * Sends concurrent decisions on the same bucket, key and limits as one script call, each
 * decided in order as if it had been sent alone.
 * <p>
 * Per bucket, key and limits (a lane) at most one call is in flight: a decision that
 * finds its lane idle is sent at once, alone, so a lone request never waits; decisions
 * that arrive while a call is in flight wait for it to return and, once its callers have
 * run, go together, up to {@value #MAX_BATCH} in one call (a full batch goes at once).
 * The script decides a batch's requests one after another on one Redis {@code TIME}, each
 * with its own cost and delay bound, and replies with each one's decision as a call of
 * its own at that instant would have: the batch changes how many calls carry the
 * decisions, never a decision.
 * <p>
 * Each request keeps its own outcome: a call that fails fails each of its requests (which
 * the failure mode then answers one by one), and a request whose caller gave up (timed
 * out) before the reply came has its permits given back if it was allowed, as a late
 * single call's are.
 */
final class DecisionCoalescer implements CallLanes.Batches<DecisionCoalescer.LaneKey, DecisionCoalescer.Request> {

	/** The most decisions one script call carries. */
	static final int MAX_BATCH = 128;

	private final CallLanes<LaneKey, Request> lanes = new CallLanes<>(MAX_BATCH, this);

	private final Script script;

	private final LongAdder coalesced = new LongAdder();

	private final LongAdder calls = new LongAdder();

	/**
	 * Creates a coalescer.
	 * @param script how a batch is sent and its reply read
	 */
	DecisionCoalescer(Script script) {
		this.script = script;
	}

	/**
	 * Returns how many decisions went to Redis in a call with others.
	 * @return the count since the coalescer was created
	 */
	long coalesced() {
		return this.coalesced.sum();
	}

	/**
	 * Returns how many calls carried decisions to Redis.
	 * @return the count since the coalescer was created
	 */
	long calls() {
		return this.calls.sum();
	}

	/**
	 * Decides, alone or with the lane's next batch.
	 * @param bucket the bucket
	 * @param key the key
	 * @param limits the limits
	 * @param cost the permits asked for
	 * @param maxDelayMicros the longest leaky bucket delay accepted
	 * @param async whether the caller must not be blocked (a blocking client then runs
	 * the call on its own thread)
	 * @return the decision; failing with {@link Script#failure} of why when the call
	 * failed. Completing it early (a timeout) makes the caller's decision a late one,
	 * whose permits are given back.
	 */
	CompletableFuture<Decision> decide(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, boolean async) {
		Request request = new Request(cost, maxDelayMicros, this.script.reconnects());
		this.lanes.add(new LaneKey(bucket, key, limits), request, async);
		return request;
	}

	/**
	 * Sends a lane's batch: a batch of one as a single decision.
	 */
	@Override
	public CompletableFuture<List<Object>> send(LaneKey lane, List<Request> batch, boolean async) {
		this.calls.increment();
		if (batch.size() > 1) {
			this.coalesced.add(batch.size());
		}
		if (madeAnewSince(batch)) {
			return CompletableFuture.failedFuture(new StoreReconnectedException(
					"The Redis connection was made anew while the rate limit calls waited for the one before; "
							+ "not sent",
					null));
		}
		return this.script.send(lane, batch, async, (late) -> deliver(lane, batch, late));
	}

	/**
	 * Fails the requests of a batch that have no outcome yet.
	 */
	@Override
	public void fail(List<Request> batch, Throwable cause) {
		fail(batch, this.script.failure(ScriptRunner.unwrap(cause)));
	}

	private static void fail(List<Request> batch, RuntimeException failure) {
		for (Request request : batch) {
			request.completeExceptionally(failure);
		}
	}

	/**
	 * Hands each request its decision; a request whose caller has moved on gets none, and
	 * the permits it was given go back.
	 */
	@Override
	public void deliver(LaneKey lane, List<Request> batch, List<Object> reply) {
		List<Decision> decisions;
		try {
			decisions = this.script.decisions(reply, batch, lane.limits);
		}
		catch (RuntimeException ex) {
			fail(batch, this.script.failure(ex));
			return;
		}
		for (int i = 0; i < batch.size(); i++) {
			Request request = batch.get(i);
			Decision decision = decisions.get(i);
			if (!request.complete(decision) && decision.allowed()) {
				this.script.giveBack(lane, request.cost);
			}
		}
	}

	/**
	 * Whether the connection was made anew since a request of the batch began: it waited
	 * for the lane's call before (which the drop failed), and its caller checked Redis
	 * for lost data before the new connection was made.
	 */
	private boolean madeAnewSince(List<Request> batch) {
		long reconnects = this.script.reconnects();
		for (Request request : batch) {
			if (request.reconnects < reconnects) {
				return true;
			}
		}
		return false;
	}

	/**
	 * How a batch goes to Redis and what its reply means; the store's.
	 */
	interface Script {

		/**
		 * Sends one call with the batch's decisions, in order: a batch of one as a single
		 * decision.
		 * @param lane the bucket, key and limits
		 * @param batch the requests
		 * @param async whether the calling thread must not block
		 * @param lateReply told of a reply that arrived after the call had failed
		 * @return the reply; failed at the latest once the store's longest wait has
		 * passed, since a lane waits for its call before it sends the next
		 */
		CompletableFuture<List<Object>> send(LaneKey lane, List<Request> batch, boolean async,
				Consumer<List<Object>> lateReply);

		/**
		 * Reads each request's decision from a reply.
		 * @param reply the reply
		 * @param batch the requests, in the order sent
		 * @param limits the limits
		 * @return the decisions, in the batch's order
		 */
		List<Decision> decisions(List<Object> reply, List<Request> batch, List<LimitSpec> limits);

		/**
		 * Says why a call failed, as the store reports it.
		 * @param cause what the call failed with
		 * @return the exception each of its requests fails with
		 */
		RuntimeException failure(Throwable cause);

		/**
		 * Returns how many times the connection was made anew (see
		 * {@link ScriptRunner#reconnects()}).
		 * @return the count
		 */
		long reconnects();

		/**
		 * Gives back the permits of a decision whose caller was answered without it.
		 * @param lane the bucket, key and limits
		 * @param cost the permits
		 */
		void giveBack(LaneKey lane, long cost);

	}

	/**
	 * What decisions must share to go in one call.
	 *
	 * @param bucket the bucket
	 * @param key the key
	 * @param limits the limits
	 */
	record LaneKey(String bucket, String key, List<LimitSpec> limits) {

	}

	/**
	 * One decision waiting for its reply.
	 */
	static final class Request extends CompletableFuture<Decision> {

		final long cost;

		final long maxDelayMicros;

		/** The connection's reconnects when the request began. */
		final long reconnects;

		Request(long cost, long maxDelayMicros, long reconnects) {
			this.cost = cost;
			this.maxDelayMicros = maxDelayMicros;
			this.reconnects = reconnects;
		}

	}

}
