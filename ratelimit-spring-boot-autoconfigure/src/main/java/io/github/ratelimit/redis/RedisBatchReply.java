package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.RunTakenAtOnce;
import io.github.ratelimit.store.RateLimitStoreException;

/**
 * Reads the replies of {@code rate_limit.lua}: a decision's (operations {@code d} and
 * {@code p}), and a batch's (operation {@code b}), which comes in runs of identical
 * requests (see the script's header). A batch's reply is read into each request's
 * decision exactly as a call of its own would have replied it.
 */
final class RedisBatchReply {

	/** A decision's reply per limit: allowed, remaining, reset after, delay or retry. */
	static final int PER_LIMIT = 4;

	/**
	 * A run's reply starts with the number admitted, of replies, the base (and its
	 * fraction) and the step (and its fraction).
	 */
	private static final int RUN_HEADER = 6;

	private RedisBatchReply() {
	}

	/**
	 * Returns the batch's runs of requests that ask alike (the same cost and delay
	 * bound): the lengths of the runs the script decides as one, in order.
	 * @param batch the requests
	 * @return each run's length, at least 1
	 */
	static int[] runLengths(List<DecisionCoalescer.Request> batch) {
		int[] runs = new int[batch.size()];
		int count = 0;
		for (int first = 0; first < batch.size();) {
			DecisionCoalescer.Request head = batch.get(first);
			int end = first + 1;
			while (end < batch.size() && batch.get(end).cost == head.cost
					&& batch.get(end).maxDelayMicros == head.maxDelayMicros) {
				end++;
			}
			runs[count++] = end - first;
			first = end;
		}
		return Arrays.copyOf(runs, count);
	}

	/**
	 * Reads the decision of a single call (operations {@code d} and {@code p}).
	 * @param reply the reply
	 * @param limits the limits
	 * @return the decision
	 */
	static Decision single(List<Object> reply, List<LimitSpec> limits) {
		if (reply.size() != PER_LIMIT * limits.size()) {
			throw unexpected(reply, "reply size " + reply.size());
		}
		return decision(reply, 0, limits);
	}

	/**
	 * Reads each request's decision from the reply of operation {@code b}.
	 * @param reply the reply
	 * @param batch the requests, in the order sent
	 * @param limits the limits
	 * @return the decisions, in the batch's order
	 */
	static List<Decision> batch(List<Object> reply, List<DecisionCoalescer.Request> batch, List<LimitSpec> limits) {
		int perRequest = PER_LIMIT * limits.size();
		List<Decision> decisions = new ArrayList<>(batch.size());
		int at = 0;
		int first = 0;
		for (int run : runLengths(batch)) {
			if (reply.size() < at + RUN_HEADER) {
				throw unexpected(reply, "no run at " + at);
			}
			long admitted = (Long) reply.get(at);
			long records = (Long) reply.get(at + 1);
			int header = at;
			at += RUN_HEADER;
			long replies = records + ((admitted < run) ? 1 : 0);
			if (admitted < 0 || admitted > run || records > admitted || (records == 0 && admitted > 0)
					|| reply.size() < at + replies * perRequest) {
				throw unexpected(reply, "run at " + (at - RUN_HEADER));
			}
			for (int i = 0; i < records; i++) {
				decisions.add(decision(reply, at, limits));
				at += perRequest;
			}
			if (records < admitted) {
				// The last reply's limit took it and those after it at once.
				RunTakenAtOnce taken = new RunTakenAtOnce(limits.get(0), decisions.get(decisions.size() - 1),
						batch.get(first).cost, (Long) reply.get(header + 2), (Long) reply.get(header + 3),
						(Long) reply.get(header + 4), (Long) reply.get(header + 5));
				for (long next = records; next < admitted; next++) {
					decisions.add(taken.next());
				}
			}
			if (admitted < run) {
				// Rejected alike: a rejection changes nothing the next one sees.
				Decision rejected = decision(reply, at, limits);
				at += perRequest;
				decisions.add(rejected);
				for (long i = admitted + 1; i < run; i++) {
					decisions.add(rejected.repeated());
				}
			}
			first += run;
		}
		if (at != reply.size()) {
			throw unexpected(reply, "reply size " + reply.size() + ", read " + at);
		}
		return decisions;
	}

	private static Decision decision(List<Object> reply, int offset, List<LimitSpec> limits) {
		if (limits.size() == 1) {
			return decision(reply, offset, limits.get(0));
		}
		List<Decision> decisions = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			decisions.add(decision(reply, offset + PER_LIMIT * i, limits.get(i)));
		}
		return Decision.combine(decisions);
	}

	private static Decision decision(List<Object> reply, int offset, LimitSpec spec) {
		// 1 allowed, 0 rejected, -1 rejected and the key blocked for the limit's penalty.
		long answer = (Long) reply.get(offset);
		boolean allowed = answer == 1L;
		long remaining = (Long) reply.get(offset + 1);
		long resetAfter = (Long) reply.get(offset + 2);
		// The delay when allowed, the retry-after (-1 = never) when rejected.
		long wait = (Long) reply.get(offset + 3);
		if (allowed) {
			return Decision.allowed(spec, remaining, resetAfter, wait);
		}
		Decision rejected = Decision.rejected(spec, remaining, resetAfter, (wait < 0) ? Decision.NEVER : wait);
		return (answer == -1L) ? rejected.startingPenalty() : rejected;
	}

	private static RateLimitStoreException unexpected(List<Object> reply, String what) {
		return new RateLimitStoreException("Unexpected reply from " + RedisRateLimitScript.LOCATION + ": " + reply,
				new IllegalStateException(what), false);
	}

}
