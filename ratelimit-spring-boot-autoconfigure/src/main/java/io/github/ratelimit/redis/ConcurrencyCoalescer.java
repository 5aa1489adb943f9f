package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

import io.github.ratelimit.store.RateLimitStoreException;

/**
 * Sends concurrent operations on concurrency limits (acquire, renew, release, read,
 * release all) as one script call, each run in order as if it had been sent alone: the
 * batch changes how many calls carry the operations, never an outcome.
 * <p>
 * Lanes as for rate limit decisions ({@link CallLanes}): an operation that finds its lane
 * idle goes at once, alone; those that arrive while the lane's call is in flight go
 * together in its next one. On one Redis (standalone, Sentinel, master/replica) every key
 * shares one lane, since a call may touch any key: a hundred users' permits taken and
 * given back at once go in a few calls, not two hundred. On a Cluster each key has its
 * own lane, since a call's keys must share a slot.
 * <p>
 * An operation whose caller gave up (its wait timed out) before its batch was sent is
 * left out of the call: an acquire nobody waits for would hold a permit until its lease
 * ends. One whose wait ended after its call went fails as a call Redis may have run, so
 * that its caller asks again for the same holder rather than count it as not taken.
 */
final class ConcurrencyCoalescer implements CallLanes.Batches<String, ConcurrencyCoalescer.Operation> {

	/** The most operations one script call carries. */
	static final int MAX_BATCH = 128;

	private final CallLanes<String, Operation> lanes = new CallLanes<>(MAX_BATCH, this);

	/**
	 * The connections operations go over: on one Redis, a holder's always over the same
	 * one; on a Cluster, the first.
	 */
	private final List<RedisScriptCalls> connections;

	/**
	 * The lanes of every key on one Redis, one per connection: names no Redis key has
	 * (those hold {@code :{}), so that a Cluster's lanes, named by their key, need no
	 * object of their own per operation.
	 */
	private final String[] oneNodeLanes;

	private final RedisDecisionProtocol protocol;

	private final BooleanSupplier oneNode;

	private final LongAdder coalesced = new LongAdder();

	private final LongAdder sent = new LongAdder();

	/**
	 * Creates a coalescer on one connection.
	 * @param calls sends the calls and waits for their replies
	 * @param protocol what a call says
	 * @param oneNode whether a call may touch any key now
	 */
	ConcurrencyCoalescer(RedisScriptCalls calls, RedisDecisionProtocol protocol, BooleanSupplier oneNode) {
		this(List.of(calls), protocol, oneNode);
	}

	/**
	 * Creates a coalescer.
	 * @param connections send the calls and wait for their replies: on one Redis, a lane
	 * for every key per connection, each holder's operations on one of them, so that its
	 * acquire, renewals and release stay in order
	 * @param protocol what a call says
	 * @param oneNode whether a call may touch any key now
	 */
	ConcurrencyCoalescer(List<RedisScriptCalls> connections, RedisDecisionProtocol protocol, BooleanSupplier oneNode) {
		this.connections = List.copyOf(connections);
		this.oneNodeLanes = new String[this.connections.size()];
		for (int i = 0; i < this.oneNodeLanes.length; i++) {
			this.oneNodeLanes[i] = "connection " + i;
		}
		this.protocol = protocol;
		this.oneNode = oneNode;
	}

	/**
	 * Runs one operation of {@code concurrency.lua}, alone or with its lane's next batch,
	 * and waits for its reply.
	 * @param cc the operation
	 * @param bucket the bucket
	 * @param key the key
	 * @param holder the holder, or {@code ""}
	 * @param permits the limit's permits, or 0
	 * @param leaseMicros the limit's lease, or 0
	 * @return the operation's reply
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the call failed or
	 * its reply did not come in time
	 */
	List<Object> run(String cc, String bucket, String key, String holder, int permits, long leaseMicros) {
		Operation operation = submit(cc, bucket, key, holder, permits, leaseMicros, false);
		try {
			return this.connections.get(0).await(operation);
		}
		catch (RateLimitStoreException ex) {
			// Failed by its call (e.g. a refused connection, not sent), or never sent: as
			// it is.
			boolean waitEnded = ex.getCause() instanceof TimeoutException;
			if (ex.mayHaveRun() || !waitEnded || operation.abandon()) {
				throw ex;
			}
			// Its wait, which began before the lane's call ahead of it, ended after its
			// own call went: Redis may run it, and an acquire asked again for the same
			// holder takes that permit rather than a second one.
			throw new RateLimitStoreException(ex.getMessage() + "; the call was sent, Redis may have run it",
					ex.getCause(), ex.isTimeout(), true);
		}
	}

	/**
	 * Sends one operation, alone or with its lane's next batch.
	 * @param cc the operation
	 * @param bucket the bucket
	 * @param key the key
	 * @param holder the holder, or {@code ""}
	 * @param permits the limit's permits, or 0
	 * @param leaseMicros the limit's lease, or 0
	 * @param async whether the calling thread must not block
	 * @return its reply; completing it early (the caller gives up) leaves it out of a
	 * batch not sent yet
	 */
	Operation submit(String cc, String bucket, String key, String holder, int permits, long leaseMicros,
			boolean async) {
		Operation operation = new Operation(cc, this.protocol.concurrencyKey(bucket, key), holder, permits,
				leaseMicros);
		String lane = this.oneNode.getAsBoolean()
				? this.oneNodeLanes[Math.floorMod(holder.hashCode(), this.oneNodeLanes.length)] : operation.redisKey;
		this.lanes.add(lane, operation, async);
		return operation;
	}

	/**
	 * Returns how many operations went to Redis in a call with others.
	 * @return the count since the coalescer was created
	 */
	long coalesced() {
		return this.coalesced.sum();
	}

	/**
	 * Returns how many calls carried operations to Redis.
	 * @return the count since the coalescer was created
	 */
	long calls() {
		return this.sent.sum();
	}

	/** The connection of a lane: one of one Redis's, or a Cluster key's, the first. */
	private int connection(String lane) {
		for (int i = 1; i < this.oneNodeLanes.length; i++) {
			if (this.oneNodeLanes[i].equals(lane)) {
				return i;
			}
		}
		return 0;
	}

	@Override
	public CompletableFuture<List<Object>> send(String lane, List<Operation> batch, boolean async) {
		List<Operation> waited = new ArrayList<>(batch.size());
		for (Operation operation : batch) {
			if (operation.send()) {
				waited.add(operation);
			}
		}
		if (waited.isEmpty()) {
			return CompletableFuture.completedFuture(List.of());
		}
		this.sent.increment();
		if (waited.size() > 1) {
			this.coalesced.add(waited.size());
		}
		return this.connections.get(connection(lane)).send(this.protocol.concurrencyBatch(waited), async, null);
	}

	@Override
	@SuppressWarnings("unchecked")
	public void deliver(String lane, List<Operation> batch, List<Object> reply) {
		// The reply holds the sent operations' replies in order; a call of one is that
		// operation's own reply.
		int sent = 0;
		for (Operation operation : batch) {
			if (operation.wasSent()) {
				sent++;
			}
		}
		int at = 0;
		for (Operation operation : batch) {
			if (operation.wasSent()) {
				operation.complete((sent == 1) ? reply : (List<Object>) reply.get(at++));
			}
		}
	}

	@Override
	public void fail(List<Operation> batch, Throwable cause) {
		RuntimeException failure = this.connections.get(0).failure(ScriptRunner.unwrap(cause));
		for (Operation operation : batch) {
			operation.completeExceptionally(failure);
		}
	}

	/**
	 * One operation waiting for its reply.
	 */
	static final class Operation extends CompletableFuture<List<Object>> {

		private final String cc;

		private final String redisKey;

		private final String holder;

		private final int permits;

		private final long leaseMicros;

		private static final int WAITING = 0;

		private static final int SENT = 1;

		private static final int ABANDONED = 2;

		/**
		 * Whether it went in its batch's call, or its caller gave up on it before: one or
		 * the other, never both.
		 */
		private final AtomicInteger state = new AtomicInteger(WAITING);

		Operation(String cc, String redisKey, String holder, int permits, long leaseMicros) {
			this.cc = cc;
			this.redisKey = redisKey;
			this.holder = holder;
			this.permits = permits;
			this.leaseMicros = leaseMicros;
		}

		/** Marks it sent, unless its caller gave up on it. */
		boolean send() {
			return !isDone() && this.state.compareAndSet(WAITING, SENT);
		}

		boolean wasSent() {
			return this.state.get() == SENT;
		}

		/**
		 * Marks it given up on, unless it was sent.
		 * @return {@code true} when it will never be sent
		 */
		boolean abandon() {
			return this.state.compareAndSet(WAITING, ABANDONED) || this.state.get() == ABANDONED;
		}

		String cc() {
			return this.cc;
		}

		String redisKey() {
			return this.redisKey;
		}

		String holder() {
			return this.holder;
		}

		int permits() {
			return this.permits;
		}

		long leaseMicros() {
			return this.leaseMicros;
		}

	}

}
