package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
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
final class DecisionCoalescer {

	/** The most decisions one script call carries. */
	static final int MAX_BATCH = 128;

	private final ConcurrentMap<LaneKey, Lane> lanes = new ConcurrentHashMap<>();

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
		LaneKey laneKey = new LaneKey(bucket, key, limits);
		while (true) {
			Lane lane = this.lanes.get(laneKey);
			if (lane == null) {
				Lane idle = new Lane(laneKey);
				if (this.lanes.putIfAbsent(laneKey, idle) == null) {
					send(idle, List.of(request), async);
					return request;
				}
				continue;
			}
			List<Request> full = lane.enqueue(request);
			if (full == Lane.RETIRED) {
				// Its last call is returning: do not wait for that thread to remove it.
				this.lanes.remove(laneKey, lane);
				continue;
			}
			if (full != null) {
				send(lane, full, true);
			}
			return request;
		}
	}

	/**
	 * Sends a batch: each lane's requests go in order, one call at a time (a full batch
	 * aside).
	 */
	private void send(Lane lane, List<Request> batch, boolean async) {
		this.calls.increment();
		if (batch.size() > 1) {
			this.coalesced.add(batch.size());
		}
		CompletableFuture<List<Object>> call;
		try {
			call = madeAnewSince(batch)
					? CompletableFuture.failedFuture(new StoreReconnectedException(
							"The Redis connection was made anew while the rate limit calls waited for the one before; "
									+ "not sent",
							null))
					: this.script.send(lane.key, batch, async, (late) -> deliver(lane.key, batch, late));
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		call.whenComplete((reply, ex) -> {
			// The callers of this batch run first, then one call carries every request
			// waiting: those that waited for this call and those its callers made at once
			// (a loop, a pipeline). Sending the ones that waited before the callers ran
			// split a steady load into two groups taking turns, twice the calls.
			boolean handedOut = false;
			try {
				if (ex != null) {
					fail(batch, this.script.failure(ScriptRunner.unwrap(ex)));
				}
				else {
					deliver(lane.key, batch, reply);
				}
				handedOut = true;
			}
			finally {
				// Whatever was thrown above (an Error while reading the reply), no
				// request of the batch is left waiting, and the lane goes on: a lane
				// never returned would hold every later decision on its key for good.
				if (!handedOut) {
					fail(batch, this.script.failure(new IllegalStateException("The call's reply was not handed out")));
				}
				returned(lane);
			}
		});
	}

	/**
	 * Fails the requests of a batch that have no outcome yet.
	 */
	private static void fail(List<Request> batch, RuntimeException failure) {
		for (Request request : batch) {
			request.completeExceptionally(failure);
		}
	}

	/**
	 * Sends what arrived meanwhile, or lets the lane go when nothing did.
	 */
	private void returned(Lane lane) {
		List<Request> next = lane.returned();
		if (next != null) {
			send(lane, next, true);
		}
		else if (lane.isRetired()) {
			this.lanes.remove(lane.key, lane);
		}
	}

	/**
	 * Hands each request its decision; a request whose caller has moved on gets none, and
	 * the permits it was given go back.
	 */
	private void deliver(LaneKey lane, List<Request> batch, List<Object> reply) {
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

	/**
	 * The calls of one bucket, key and limits: how many are in flight, and the requests
	 * waiting for the next one. Removed from the map once idle; a request that finds it
	 * retired takes a new one.
	 */
	private static final class Lane {

		static final List<Request> RETIRED = List.of();

		final LaneKey key;

		private List<Request> waiting = new ArrayList<>();

		private int inFlight = 1;

		private boolean retired;

		Lane(LaneKey key) {
			this.key = key;
		}

		/**
		 * Queues a request for the next call.
		 * @return {@link #RETIRED} when the lane is no longer in use, a full batch to
		 * send at once, or {@code null}
		 */
		synchronized @Nullable List<Request> enqueue(Request request) {
			if (this.retired) {
				return RETIRED;
			}
			this.waiting.add(request);
			if (this.waiting.size() < MAX_BATCH) {
				return null;
			}
			this.inFlight++;
			return take();
		}

		/**
		 * Notes that a call returned.
		 * @return the requests to send next, or {@code null} (the lane is retired when
		 * nothing else is in flight)
		 */
		synchronized @Nullable List<Request> returned() {
			if (!this.waiting.isEmpty()) {
				return take();
			}
			this.inFlight--;
			if (this.inFlight == 0) {
				this.retired = true;
			}
			return null;
		}

		synchronized boolean isRetired() {
			return this.retired;
		}

		private List<Request> take() {
			List<Request> batch = this.waiting;
			// Sized for as many as came last: a steady load then never grows the list.
			this.waiting = new ArrayList<>(batch.size());
			return batch;
		}

	}

}
