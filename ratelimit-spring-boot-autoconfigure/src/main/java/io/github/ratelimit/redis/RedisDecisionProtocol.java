package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.CalendarUnit;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The Java side of {@code rate_limit.lua}'s protocol: the keys and arguments each
 * operation sends, in the order the script's header lists them, and what its reply means.
 * Nothing here sends or waits.
 */
final class RedisDecisionProtocol {

	/** The operation and the cost (or count) that precede the limits. */
	private static final int FIXED_ARGS = 2;

	/**
	 * The optional arguments after the limits: delay bound, now, TTL slack. A batch,
	 * charge or restore always sends all three; the others leave trailing unset ones out.
	 */
	private static final int OPTIONAL_ARGS = 3;

	/** The values of {@code q}'s reply before the decision's. */
	private static final int HELD_HEADER = 5;

	/** An argument the script reads as absent: unused, or an optional one left unset. */
	private static final String UNSET = "";

	private final RedisKeys keys;

	private final @Nullable TimeSource timeSource;

	private final @Nullable String expirySlackMillis;

	private final ConcurrentMap<LimitSpec, String[]> specArgs = new ConcurrentHashMap<>();

	/**
	 * Creates the protocol of one store.
	 * @param keys names the keys of each call
	 * @param timeSource the clock sent as now, or {@code null} for Redis {@code TIME}
	 * @param expirySlack the time added to every key's TTL
	 */
	RedisDecisionProtocol(RedisKeys keys, @Nullable TimeSource timeSource, Duration expirySlack) {
		this.keys = keys;
		this.timeSource = timeSource;
		this.expirySlackMillis = expirySlack.isZero() ? null : Long.toString(expirySlack.toMillis());
	}

	/**
	 * One call of the script: its keys and arguments.
	 *
	 * @param keys the script's keys
	 * @param args the script's arguments
	 */
	record Call(String[] keys, String[] args) {

	}

	/** Operation {@code d}: decides a request; read the reply with {@link #decision}. */
	Call decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		return single("d", bucket, key, limits, cost, maxDelayMicros);
	}

	/**
	 * Operation {@code q}: decides a request and takes a permit of the concurrency limit
	 * of its bucket and key; read the reply with {@link #heldDecision}.
	 */
	Call decideHolding(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros, String holder,
			int permits, long leaseMicros, boolean enforced) {
		String[] args = withAllOptional("q", Long.toString(cost), limits, 4);
		int at = args.length - 4;
		args[at - 3] = (maxDelayMicros == RateLimitStore.NO_MAX_DELAY) ? UNSET : Long.toString(maxDelayMicros);
		args[at++] = holder;
		args[at++] = Integer.toString(permits);
		args[at++] = Long.toString(leaseMicros);
		args[at] = enforced ? "1" : UNSET;
		String[] rateKeys = this.keys.keys(bucket, key, limits);
		String[] keys = Arrays.copyOf(rateKeys, rateKeys.length + 1);
		keys[rateKeys.length] = this.keys.concurrencyKey(bucket, key);
		return new Call(keys, args);
	}

	/**
	 * Operation {@code p}: decides without taking; read the reply with {@link #decision}.
	 */
	Call peek(String bucket, String key, List<LimitSpec> limits) {
		return single("p", bucket, key, limits, 1, RateLimitStore.NO_MAX_DELAY);
	}

	/** Operation {@code r}: gives permits back; the reply is empty. */
	Call refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		return single("r", bucket, key, limits, cost, RateLimitStore.NO_MAX_DELAY);
	}

	/**
	 * Operation {@code o}: takes permits even past the limit, each limit on its own; read
	 * the reply with {@link #owed}.
	 */
	Call owe(String bucket, String key, List<LimitSpec> limits, long permits) {
		return single("o", bucket, key, limits, permits, RateLimitStore.NO_MAX_DELAY);
	}

	/** Operation {@code x}: forgets the key's state; the reply is empty. */
	Call reset(String bucket, String key, List<LimitSpec> limits) {
		return single("x", bucket, key, limits, 1, RateLimitStore.NO_MAX_DELAY);
	}

	/**
	 * Operation {@code c}: takes each limit's cost, allowed or not; the reply is empty.
	 */
	Call charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		return perLimitCosts("c", bucket, key, limits, costs);
	}

	/**
	 * Operation {@code u}: charges only full limits; read the reply with
	 * {@link #restored}.
	 */
	Call restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		return perLimitCosts("u", bucket, key, limits, costs);
	}

	/**
	 * What the coalescer sends for its batch: a batch of one is a plain decision
	 * (operation {@code d}), larger ones are operation {@code b}. Read the reply with
	 * {@link #coalescedDecisions}.
	 */
	Call coalesced(DecisionCoalescer.LaneKey lane, List<DecisionCoalescer.Request> batch) {
		if (batch.size() == 1) {
			DecisionCoalescer.Request request = batch.get(0);
			return decide(lane.bucket(), lane.key(), lane.limits(), request.cost, request.maxDelayMicros);
		}
		return batch(lane, batch);
	}

	/**
	 * Operation {@code b}, whatever the batch's size: the requests as runs of identical
	 * ones, each its length, cost and delay bound. Read the reply with
	 * {@link #batchDecisions}.
	 */
	Call batch(DecisionCoalescer.LaneKey lane, List<DecisionCoalescer.Request> batch) {
		int[] runs = RedisBatchReply.runLengths(batch);
		String[] args = withAllOptional("b", Integer.toString(batch.size()), lane.limits(), 3 * runs.length);
		int at = args.length - 3 * runs.length;
		int first = 0;
		for (int run : runs) {
			DecisionCoalescer.Request request = batch.get(first);
			args[at++] = Integer.toString(run);
			args[at++] = Long.toString(request.cost);
			args[at++] = (request.maxDelayMicros == RateLimitStore.NO_MAX_DELAY) ? UNSET
					: Long.toString(request.maxDelayMicros);
			first += run;
		}
		return new Call(this.keys.keys(lane.bucket(), lane.key(), lane.limits()), args);
	}

	/**
	 * Operation {@code h}: an instance is alive for {@code timeToLive}; read the reply
	 * with {@link #heartbeat(List)}.
	 */
	Call heartbeat(String instanceId, Duration timeToLive, String epoch, boolean countReset) {
		return new Call(this.keys.fleetKeys(), new String[] { "h", instanceId,
				Long.toString(Math.max(1, timeToLive.toMillis())), epoch, countReset ? "1" : UNSET });
	}

	/**
	 * Operation {@code k}: a concurrency limit's operation {@code cc} ({@code a}cquire,
	 * re{@code n}ew, {@code r}elease, {@code h}olders, release all {@code x}); see
	 * {@code concurrency.lua}.
	 */
	Call concurrency(String cc, String bucket, String key, String holder, int permits, long leaseMicros) {
		return concurrencyOn(this.keys.concurrencyKey(bucket, key), cc, holder, permits, leaseMicros);
	}

	private Call concurrencyOn(String redisKey, String cc, String holder, int permits, long leaseMicros) {
		String now = now();
		return new Call(new String[] { redisKey },
				new String[] { "k", cc, holder, Integer.toString(permits), Long.toString(leaseMicros),
						(now != null) ? now : UNSET,
						(this.expirySlackMillis != null) ? this.expirySlackMillis : UNSET });
	}

	/**
	 * Returns the Redis key of a concurrency limit's permits.
	 */
	String concurrencyKey(String bucket, String key) {
		return this.keys.concurrencyKey(bucket, key);
	}

	/**
	 * What the coalescer sends for its batch: a batch of one is a plain operation, larger
	 * ones are batch {@code b} of operation {@code k}, each operation naming its key by
	 * its index among the call's keys (each key once); see {@code concurrency.lua}. Its
	 * reply holds each operation's reply, in order.
	 */
	Call concurrencyBatch(List<ConcurrencyCoalescer.Operation> batch) {
		if (batch.size() == 1) {
			ConcurrencyCoalescer.Operation operation = batch.get(0);
			return concurrencyOn(operation.redisKey(), operation.cc(), operation.holder(), operation.permits(),
					operation.leaseMicros());
		}
		String now = now();
		Map<String, Integer> keyIndexes = new LinkedHashMap<>();
		String[] args = new String[7 + 5 * batch.size()];
		args[0] = "k";
		args[1] = "b";
		args[2] = Integer.toString(batch.size());
		args[3] = UNSET;
		args[4] = UNSET;
		args[5] = (now != null) ? now : UNSET;
		args[6] = (this.expirySlackMillis != null) ? this.expirySlackMillis : UNSET;
		int at = 7;
		for (ConcurrencyCoalescer.Operation operation : batch) {
			Integer index = keyIndexes.get(operation.redisKey());
			if (index == null) {
				index = keyIndexes.size() + 1;
				keyIndexes.put(operation.redisKey(), index);
			}
			args[at++] = operation.cc();
			args[at++] = index.toString();
			args[at++] = operation.holder();
			args[at++] = Integer.toString(operation.permits());
			args[at++] = Long.toString(operation.leaseMicros());
		}
		return new Call(keyIndexes.keySet().toArray(String[]::new), args);
	}

	/**
	 * Operation {@code h} with no time to live: an instance leaves; the reply is empty.
	 */
	Call leave(String instanceId) {
		return new Call(this.keys.fleetKeys(), new String[] { "h", instanceId, "0", UNSET, UNSET });
	}

	/** Reads the reply of {@code q}. */
	static HeldDecision heldDecision(List<Object> reply, List<LimitSpec> limits, int permits) {
		if (reply.size() < HELD_HEADER) {
			throw new IllegalStateException("Unexpected reply from rate_limit.lua (operation q): " + reply);
		}
		boolean held = ((Long) reply.get(0)) == 1L;
		ConcurrencyDecision permit = new ConcurrencyDecision(held, ((Long) reply.get(1)).intValue(), permits,
				((Long) reply.get(2)).intValue(), (Long) reply.get(3));
		boolean decided = ((Long) reply.get(4)) != 0L;
		return new HeldDecision(permit,
				decided ? RedisBatchReply.single(reply.subList(HELD_HEADER, reply.size()), limits) : null);
	}

	/** Reads the reply of {@code d} or {@code p}. */
	static Decision decision(List<Object> reply, List<LimitSpec> limits) {
		return RedisBatchReply.single(reply, limits);
	}

	/** Reads the reply of {@link #coalesced}: each request's decision, in order. */
	static List<Decision> coalescedDecisions(List<Object> reply, List<DecisionCoalescer.Request> batch,
			List<LimitSpec> limits) {
		return (batch.size() == 1) ? List.of(decision(reply, limits)) : batchDecisions(reply, batch, limits);
	}

	/** Reads the reply of {@code b}: each request's decision, in order. */
	static List<Decision> batchDecisions(List<Object> reply, List<DecisionCoalescer.Request> batch,
			List<LimitSpec> limits) {
		return RedisBatchReply.batch(reply, batch, limits);
	}

	/**
	 * Reads the reply of {@code o}: the most permits a limit owed past what it had. The
	 * script replies what each limit took, at most what it had left: exact where a count
	 * beyond 2^53 is not in Lua's doubles.
	 */
	static long owed(List<Object> reply, long permits) {
		long owed = 0;
		for (Object taken : reply) {
			owed = Math.max(owed, permits - Math.min(permits, (Long) taken));
		}
		return owed;
	}

	/** Reads the reply of {@code u}: whether the permits were taken. */
	static boolean restored(List<Object> reply) {
		return !reply.isEmpty() && ((Long) reply.get(0)) == 1L;
	}

	/** Reads the reply of a heartbeat: what the instances share. */
	static Heartbeat heartbeat(List<Object> reply) {
		return new Heartbeat(((Long) reply.get(0)).intValue(), (Long) reply.get(1), text(reply.get(2)),
				(Long) reply.get(3));
	}

	/**
	 * A bulk string of a reply as text: Spring Data Redis (the Jedis path) answers it as
	 * bytes, whose {@code toString()} differs on every call, which made every heartbeat
	 * read a new epoch.
	 */
	private static String text(Object bulk) {
		return (bulk instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(bulk);
	}

	/**
	 * A call of {@code d}, {@code p}, {@code r}, {@code o} or {@code x}: the optional
	 * arguments follow the limits, unset ones as {@code ""}, trailing unset ones not at
	 * all.
	 */
	private Call single(String op, String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		@Nullable String[] optional = { (maxDelayMicros == RateLimitStore.NO_MAX_DELAY) ? null : Long.toString(maxDelayMicros),
				now(), this.expirySlackMillis };
		int sent = optional.length;
		while (sent > 0 && optional[sent - 1] == null) {
			sent--;
		}
		String[] args = arguments(op, Long.toString(cost), limits, sent);
		int at = args.length - sent;
		for (int i = 0; i < sent; i++) {
			String value = optional[i];
			args[at + i] = (value != null) ? value : UNSET;
		}
		return new Call(this.keys.keys(bucket, key, limits), args);
	}

	/**
	 * A call of {@code c} or {@code u}: a cost per limit after the optional arguments.
	 */
	private Call perLimitCosts(String op, String bucket, String key, List<LimitSpec> limits, long[] costs) {
		String[] args = withAllOptional(op, "0", limits, costs.length);
		int at = args.length - costs.length;
		for (long cost : costs) {
			args[at++] = Long.toString(cost);
		}
		return new Call(this.keys.keys(bucket, key, limits), args);
	}

	/**
	 * The arguments of an operation that sends all three optional arguments (the delay
	 * bound unset), with room for {@code more} after them.
	 */
	private String[] withAllOptional(String op, String count, List<LimitSpec> limits, int more) {
		String[] args = arguments(op, count, limits, OPTIONAL_ARGS + more);
		int at = args.length - OPTIONAL_ARGS - more;
		String now = now();
		args[at++] = UNSET;
		args[at++] = (now != null) ? now : UNSET;
		args[at] = (this.expirySlackMillis != null) ? this.expirySlackMillis : UNSET;
		return args;
	}

	private @Nullable String now() {
		return (this.timeSource != null) ? Long.toString(this.timeSource.nowMicros()) : null;
	}

	/**
	 * The script's arguments with the operation, the cost and the limits filled in, and
	 * room for {@code more} after them.
	 */
	private String[] arguments(String op, String cost, List<LimitSpec> limits, int more) {
		String[][] limitArgs = new String[limits.size()][];
		int length = FIXED_ARGS + more;
		for (int i = 0; i < limitArgs.length; i++) {
			limitArgs[i] = this.specArgs.computeIfAbsent(limits.get(i), RedisDecisionProtocol::toArgs);
			length += limitArgs[i].length;
		}
		String[] args = new String[length];
		args[0] = op;
		args[1] = cost;
		int at = FIXED_ARGS;
		for (int i = 0; i < limitArgs.length; i++) {
			String[] limit = limitArgs[i];
			System.arraycopy(limit, 0, args, at, limit.length);
			at += limit.length;
			LimitSpec spec = limits.get(i);
			CalendarUnit calendar = spec.calendar();
			if (calendar != null) {
				calendarBounds(spec, calendar, args, at - 3);
			}
		}
		return args;
	}

	/**
	 * The script's arguments for one limit: the algorithm's code and the parameters it
	 * reads (see the header of {@code rate_limit.lua}).
	 */
	private static String[] toArgs(LimitSpec spec) {
		String[] args = algorithmArgs(spec);
		if (spec.penaltyMicros() == 0) {
			return args;
		}
		String[] penalized = new String[args.length + 2];
		penalized[0] = "!";
		penalized[1] = Long.toString(spec.penaltyMicros());
		System.arraycopy(args, 0, penalized, 2, args.length);
		return penalized;
	}

	/**
	 * A calendar window's three boundaries around the caller's clock, which Redis has no
	 * time zone rules for: the window that holds the caller's now and the next one, of
	 * which Redis's clock picks. Worked out per call, as the windows move on.
	 */
	private void calendarBounds(LimitSpec spec, CalendarUnit calendar, String[] args, int at) {
		long now = (this.timeSource != null) ? this.timeSource.nowMicros() : System.currentTimeMillis() * 1000L;
		long[] window = spec.calendarWindow(now);
		args[at] = Long.toString(window[0]);
		args[at + 1] = Long.toString(window[1]);
		args[at + 2] = Long.toString(calendar.endMicros(spec.zone(), window[1]));
	}

	private static String[] algorithmArgs(LimitSpec spec) {
		String code = spec.algorithm().code();
		if (spec.calendar() != null) {
			// The boundaries are filled in per call.
			return new String[] { "fc", Long.toString(spec.limit()), "", "", "" };
		}
		switch (spec.algorithm()) {
			case TOKEN_BUCKET:
			case GCRA:
			case LEAKY_BUCKET:
				return new String[] { code, Long.toString(spec.burst()), Long.toString(spec.limit()),
						Long.toString(spec.windowMicros()) };
			case SLIDING_WINDOW_COUNTER:
				return new String[] { code, Long.toString(spec.limit()), Integer.toString(spec.segments()),
						Long.toString(spec.segmentMicros()) };
			default:
				return new String[] { code, Long.toString(spec.limit()), Long.toString(spec.windowMicros()) };
		}
	}

}
