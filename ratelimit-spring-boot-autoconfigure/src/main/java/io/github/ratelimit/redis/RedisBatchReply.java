package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
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
				Decision taker = decisions.get(decisions.size() - 1);
				LimitSpec spec = limits.get(0);
				Backlog backlog = new Backlog(spec.limit(), (Long) reply.get(header + 2), (Long) reply.get(header + 3),
						(Long) reply.get(header + 4), (Long) reply.get(header + 5));
				for (long next = 1; next <= admitted - records; next++) {
					backlog.step();
					decisions.add(following(taker, spec, batch.get(first).cost, backlog, next));
				}
			}
			if (admitted < run) {
				// Rejected alike: a rejection changes nothing the next one sees.
				Decision rejected = decision(reply, at, limits);
				at += perRequest;
				for (long i = admitted; i < run; i++) {
					decisions.add(rejected);
				}
			}
			first += run;
		}
		if (at != reply.size()) {
			throw unexpected(reply, "reply size " + reply.size() + ", read " + at);
		}
		return decisions;
	}

	/**
	 * The decision of the {@code next}th request after {@code first} of a run one limit
	 * allowed at once: what bucket.lua and fixed_window.lua reply for it one by one. Each
	 * takes {@code cost} more, so has {@code cost} fewer remaining (always at least its
	 * own cost were available). A bucket's backlog is {@code before} it and one step more
	 * after it; a fixed window resets at its end.
	 */
	private static Decision following(Decision first, LimitSpec spec, long cost, Backlog before, long next) {
		long remaining = first.remaining() - next * cost;
		switch (spec.algorithm()) {
			case TOKEN_BUCKET:
			case GCRA:
			case LEAKY_BUCKET:
				long delay = (spec.algorithm() == Algorithm.LEAKY_BUCKET) ? before.micros() : 0;
				return Decision.allowed(spec, remaining, before.microsAfterStep(), delay);
			case FIXED_WINDOW:
				return Decision.allowed(spec, remaining, first.resetAfterMicros(), 0);
			default:
				throw new IllegalStateException("no run is taken at once by " + spec.algorithm());
		}
	}

	/**
	 * A bucket's backlog through a run taken at once, from its base on: whole
	 * microseconds and a fraction in {@code 1/L} µs (bucket.lua), each request adding the
	 * step. Exact: the fractions stay below {@code 2L}, far from overflowing a long.
	 */
	private static final class Backlog {

		private final long limit;

		private final long step;

		private final long stepFraction;

		private long whole;

		private long fraction;

		Backlog(long limit, long whole, long fraction, long step, long stepFraction) {
			this.limit = limit;
			this.whole = whole;
			this.fraction = fraction;
			this.step = step;
			this.stepFraction = stepFraction;
		}

		/** Adds one step: the backlog before the next request. */
		void step() {
			this.whole = wholeAfterStep();
			this.fraction = fractionAfterStep();
		}

		/** The backlog in microseconds, rounded up. */
		long micros() {
			return (this.fraction > 0) ? this.whole + 1 : this.whole;
		}

		/** The backlog one step later in microseconds, rounded up. */
		long microsAfterStep() {
			return (fractionAfterStep() > 0) ? wholeAfterStep() + 1 : wholeAfterStep();
		}

		private long wholeAfterStep() {
			return this.whole + this.step + ((this.fraction + this.stepFraction >= this.limit) ? 1 : 0);
		}

		private long fractionAfterStep() {
			long fraction = this.fraction + this.stepFraction;
			return (fraction >= this.limit) ? fraction - this.limit : fraction;
		}

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
		boolean allowed = ((Long) reply.get(offset)) == 1L;
		long remaining = (Long) reply.get(offset + 1);
		long resetAfter = (Long) reply.get(offset + 2);
		// The delay when allowed, the retry-after (-1 = never) when rejected.
		long wait = (Long) reply.get(offset + 3);
		if (allowed) {
			return Decision.allowed(spec, remaining, resetAfter, wait);
		}
		return Decision.rejected(spec, remaining, resetAfter, (wait < 0) ? Decision.NEVER : wait);
	}

	private static RateLimitStoreException unexpected(List<Object> reply, String what) {
		return new RateLimitStoreException("Unexpected reply from " + RedisRateLimitScript.LOCATION + ": " + reply,
				new IllegalStateException(what), false);
	}

}
