package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.ratelimit.LimitSpec;

/**
 * Gives back the permits of decisions that allowed in Redis after their caller had been
 * answered without them (a call that timed out, then ran once Redis woke up): a request
 * holds permits only in the store whose decision it got. Leaky bucket slots cannot be
 * given back; a late one stays reserved until it drains.
 */
final class LateDecisions {

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private final RedisScriptCalls calls;

	private final RedisDecisionProtocol protocol;

	private final LongAdder givenBack = new LongAdder();

	LateDecisions(RedisScriptCalls calls, RedisDecisionProtocol protocol) {
		this.calls = calls;
		this.protocol = protocol;
	}

	/** What to run on the reply of a decision whose caller may have moved on. */
	Consumer<List<Object>> onLateReply(String bucket, String key, List<LimitSpec> limits, long cost) {
		return (reply) -> {
			try {
				if (RedisDecisionProtocol.decision(reply, limits).allowed()) {
					giveBack(bucket, key, limits, cost);
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Could not give back the permits of a late Redis decision", ex);
			}
		};
	}

	/** Gives back the permits of a decision that allowed after its caller moved on. */
	void giveBack(String bucket, String key, List<LimitSpec> limits, long cost) {
		this.givenBack.increment();
		logger.debug(
				"A Redis decision of bucket '" + bucket + "' allowed after it had timed out: giving its permits back");
		this.calls.send(this.protocol.refund(bucket, key, limits, cost), false, null);
	}

	/** How many decisions had their permits given back. */
	long givenBack() {
		return this.givenBack.sum();
	}

}
