package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.ObjLongConsumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.StoreArguments;

/**
 * The store's side of {@link DecisionCoalescer}: a batch goes as the protocol's coalesced
 * call, and fails and gives late permits back as the store's own decisions do. Also sends
 * a batch of any size, for tests.
 */
final class RedisCoalescerScript implements DecisionCoalescer.Script {

	/** The store's: what operators know to look for. */
	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private final RedisScriptCalls calls;

	private final RedisDecisionProtocol protocol;

	private final ObjLongConsumer<DecisionCoalescer.LaneKey> giveBack;

	/**
	 * Creates the script of one store.
	 * @param calls sends the calls
	 * @param protocol what a batch sends and what its reply means
	 * @param giveBack gives back the permits of a late decision that allowed
	 */
	RedisCoalescerScript(RedisScriptCalls calls, RedisDecisionProtocol protocol,
			ObjLongConsumer<DecisionCoalescer.LaneKey> giveBack) {
		this.calls = calls;
		this.protocol = protocol;
		this.giveBack = giveBack;
	}

	/**
	 * Decides the requests in one call of the batch operation, in order, whatever their
	 * number: what a batch of two or more sends. Tests compare it with one call per
	 * request.
	 */
	List<Decision> decideBatch(String bucket, String key, List<LimitSpec> limits, long[] costs,
			long[] maxDelaysMicros) {
		List<DecisionCoalescer.Request> batch = new ArrayList<>(costs.length);
		for (int i = 0; i < costs.length; i++) {
			StoreArguments.check(bucket, key, limits, costs[i]);
			batch.add(new DecisionCoalescer.Request(costs[i], maxDelaysMicros[i], this.calls.reconnects()));
		}
		RedisDecisionProtocol.Call call = this.protocol.batch(new DecisionCoalescer.LaneKey(bucket, key, limits),
				batch);
		List<Object> reply = this.calls.await(this.calls.send(call, false, (late) -> {
		}));
		return RedisDecisionProtocol.batchDecisions(reply, batch, limits);
	}

	@Override
	public CompletableFuture<List<Object>> send(DecisionCoalescer.LaneKey lane, List<DecisionCoalescer.Request> batch,
			boolean async, Consumer<List<Object>> lateReply) {
		return this.calls.bounded(this.calls.send(this.protocol.coalesced(lane, batch), async, lateReply));
	}

	@Override
	public List<Decision> decisions(List<Object> reply, List<DecisionCoalescer.Request> batch, List<LimitSpec> limits) {
		return RedisDecisionProtocol.coalescedDecisions(reply, batch, limits);
	}

	@Override
	public RuntimeException failure(Throwable cause) {
		return this.calls.failure(cause);
	}

	@Override
	public long reconnects() {
		return this.calls.reconnects();
	}

	@Override
	public void giveBack(DecisionCoalescer.LaneKey lane, long cost) {
		try {
			this.giveBack.accept(lane, cost);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not give back the permits of a late Redis decision", ex);
		}
	}

}
