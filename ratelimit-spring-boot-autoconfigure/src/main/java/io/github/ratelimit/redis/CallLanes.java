package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.jspecify.annotations.Nullable;

/**
 * Requests that may share a script call, in lanes: per lane at most one call is in
 * flight. A request that finds its lane idle is sent at once, alone, so a lone request
 * never waits; requests that arrive while a call is in flight wait for it to return and
 * then go together, up to a maximum per call (a full batch goes at once). Used by
 * {@link DecisionCoalescer} (a lane per bucket, key and limits) and
 * {@link ConcurrencyCoalescer} (a lane per key, or one for all keys on a single Redis).
 *
 * @param <K> what requests share to go in one call
 * @param <R> a request
 */
final class CallLanes<K, R> {

	private final ConcurrentMap<K, Lane<K, R>> lanes = new ConcurrentHashMap<>();

	private final int maxBatch;

	private final Batches<K, R> batches;

	/**
	 * Creates lanes.
	 * @param maxBatch the most requests one call carries
	 * @param batches how a batch is sent and its reply handed out
	 */
	CallLanes(int maxBatch, Batches<K, R> batches) {
		this.maxBatch = maxBatch;
		this.batches = batches;
	}

	/**
	 * Sends a request alone when its lane is idle, else queues it for the lane's next
	 * call (sending that call when the batch is full).
	 * @param key the lane
	 * @param request the request
	 * @param async whether the calling thread must not block
	 */
	void add(K key, R request, boolean async) {
		while (true) {
			Lane<K, R> lane = this.lanes.get(key);
			if (lane == null) {
				Lane<K, R> idle = new Lane<>(key);
				if (this.lanes.putIfAbsent(key, idle) == null) {
					send(idle, List.of(request), async);
					return;
				}
				continue;
			}
			Queued<R> queued = lane.enqueue(request, this.maxBatch);
			if (queued.retired()) {
				// Its last call is returning: do not wait for that thread to remove it.
				this.lanes.remove(key, lane);
				continue;
			}
			if (queued.full() != null) {
				send(lane, queued.full(), true);
			}
			return;
		}
	}

	/**
	 * Sends a batch: each lane's requests go in order, one call at a time (a full batch
	 * aside). A call that has completed when it returns (a connection known closed fails
	 * at once) is handed out here and the next batch sent in this loop: chaining them
	 * through nested callbacks grew the stack with every failed call while callers kept
	 * coming, until a {@link StackOverflowError} left the lane in flight for good.
	 */
	private void send(Lane<K, R> lane, @Nullable List<R> first, boolean firstAsync) {
		@Nullable List<R> batch = first;
		boolean async = firstAsync;
		while (batch != null) {
			CompletableFuture<List<Object>> call;
			try {
				call = this.batches.send(lane.key, batch, async);
			}
			catch (Throwable ex) {
				// An Error too: the lane must go on, and each request learns why.
				call = CompletableFuture.failedFuture(ex);
			}
			if (!call.isDone()) {
				List<R> sent = batch;
				call.whenComplete((reply, ex) -> send(lane, handOut(lane, sent, reply, ex), true));
				return;
			}
			List<Object> reply = null;
			Throwable failure = null;
			try {
				reply = call.join();
			}
			catch (CompletionException | CancellationException ex) {
				failure = ex;
			}
			batch = handOut(lane, batch, reply, failure);
			async = true;
		}
	}

	/**
	 * Gives each request of a returned call its outcome, then notes the return.
	 * @return the next batch to send, or {@code null}
	 */
	private @Nullable List<R> handOut(Lane<K, R> lane, List<R> batch, @Nullable List<Object> reply,
			@Nullable Throwable failure) {
		// The callers of this batch run first, then one call carries every request
		// waiting: those that waited for this call and those its callers made at once
		// (a loop, a pipeline). Sending the ones that waited before the callers ran
		// split a steady load into two groups taking turns, twice the calls.
		try {
			if (failure != null) {
				this.batches.fail(batch, failure);
			}
			else {
				this.batches.deliver(lane.key, batch, Objects.requireNonNull(reply));
			}
		}
		catch (Throwable ex) {
			// Whatever was thrown (an Error while reading the reply), no request of the
			// batch is left waiting, and the lane goes on: a lane never returned would
			// hold every later request on its key for good.
			this.batches.fail(batch, new IllegalStateException("The call's reply was not handed out", ex));
		}
		return returned(lane);
	}

	/**
	 * Notes that a call returned.
	 * @return what arrived meanwhile, to send next; {@code null} when nothing did (the
	 * lane is let go when no other call is in flight)
	 */
	private @Nullable List<R> returned(Lane<K, R> lane) {
		List<R> next = lane.returned();
		if (next == null && lane.isRetired()) {
			this.lanes.remove(lane.key, lane);
		}
		return next;
	}

	/**
	 * How a lane's batch goes to Redis and how its reply is handed out.
	 *
	 * @param <K> what the lane's requests share
	 * @param <R> a request
	 */
	interface Batches<K, R> {

		/**
		 * Sends one call with the batch's requests, in order.
		 * @param lane what the requests share
		 * @param batch the requests
		 * @param async whether the calling thread must not block
		 * @return the reply; failed at the latest once the store's longest wait has
		 * passed, since a lane waits for its call before it sends the next
		 */
		CompletableFuture<List<Object>> send(K lane, List<R> batch, boolean async);

		/**
		 * Hands each request its outcome from the call's reply.
		 * @param lane what the requests share
		 * @param batch the requests, in the order sent
		 * @param reply the reply
		 */
		void deliver(K lane, List<R> batch, List<Object> reply);

		/**
		 * Fails the requests of a call that failed (those that have no outcome yet).
		 * @param batch the requests
		 * @param cause what the call failed with, as the future gave it
		 */
		void fail(List<R> batch, Throwable cause);

	}

	/** What {@link Lane#enqueue} did: queued, queued and filled a batch, or nothing. */
	private record Queued<R>(boolean retired, @Nullable List<R> full) {

		private static final Queued<?> WAITING = new Queued<>(false, null);

		private static final Queued<?> RETIRED = new Queued<>(true, null);

		/** Queued for the lane's next call: no allocation for the common case. */
		@SuppressWarnings("unchecked")
		static <R> Queued<R> waiting() {
			return (Queued<R>) WAITING;
		}

		/** Not queued: the lane is no longer in use. */
		@SuppressWarnings("unchecked")
		static <R> Queued<R> retiredLane() {
			return (Queued<R>) RETIRED;
		}

	}

	/**
	 * The calls of one lane: how many are in flight, and the requests waiting for the
	 * next one. Removed from the map once idle; a request that finds it retired takes a
	 * new one.
	 *
	 * @param <K> what the lane's requests share
	 * @param <R> a request
	 */
	private static final class Lane<K, R> {

		private final K key;

		private List<R> waiting = new ArrayList<>();

		private int inFlight = 1;

		private boolean retired;

		private Lane(K key) {
			this.key = key;
		}

		/** Queues a request for the next call. */
		private synchronized Queued<R> enqueue(R request, int maxBatch) {
			if (this.retired) {
				return Queued.retiredLane();
			}
			this.waiting.add(request);
			if (this.waiting.size() < maxBatch) {
				return Queued.waiting();
			}
			this.inFlight++;
			return new Queued<>(false, take());
		}

		/**
		 * Notes that a call returned.
		 * @return the requests to send next, or {@code null} (the lane is retired when
		 * nothing else is in flight)
		 */
		private synchronized @Nullable List<R> returned() {
			if (!this.waiting.isEmpty()) {
				return take();
			}
			this.inFlight--;
			if (this.inFlight == 0) {
				this.retired = true;
			}
			return null;
		}

		private synchronized boolean isRetired() {
			return this.retired;
		}

		private List<R> take() {
			List<R> batch = this.waiting;
			// Sized for as many as came last: a steady load then never grows the list.
			this.waiting = new ArrayList<>(batch.size());
			return batch;
		}

	}

}
