package io.github.ratelimit.algorithm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#SLIDING_LOG}: the time of every admitted permit in the last {@code W},
 * oldest first. Entries at or before {@code t - W} no longer count; exact over every
 * window.
 * <p>
 * A log holds up to {@code L} entries ({@value LimitSpec#MAX_SLIDING_LOG_LIMIT} at most),
 * so a state must not be a copy of them per request. A state is an immutable view: the
 * entries {@code [from, to)} of a {@link Buffer} shared by the states derived from one
 * another, followed by a <em>tail</em> of {@code tailCount} entries at {@code tailTime}
 * kept in the state itself. A request at the tail's time only counts the tail up; a
 * request at a later time first appends the tail to the buffer.
 * <p>
 * The buffer is append-only and each of its slots is written at most once: a state
 * appends at its {@code to} only after claiming the slots {@code [to, to + n)} by moving
 * the buffer's claimed length from {@code to} to {@code to + n} (a compare-and-set), so
 * no two states ever write one slot, and a slot a view reads never changes. When the
 * slots are already claimed (by a state derived from the same one and then dropped, such
 * as a request another limit rejected, or by a concurrent decision), they are shared if
 * they already hold the very entries to append (the dropped state appended the same
 * tail), and otherwise the live entries are copied into a new buffer of about twice their
 * number; so is a full buffer. A copy of {@code n} entries leaves room for about
 * {@code n} appends, so appending costs amortized O(1), and a rejection, a tail that
 * grows or a refund within the tail writes nothing. A refund of more than the tail drops
 * entries from the view, and the next append at a new time then copies the live entries
 * once.
 * <p>
 * The entries are in time order (time never goes backwards for one state), so the first
 * live entry is found by binary search and a rejection never needs to store a state.
 */
final class SlidingLogState extends LimitState {

	private static final int INITIAL_CAPACITY = 8;

	private static final Buffer EMPTY = new Buffer(new long[0], 0);

	/** The window of the spec this state is for, part of its shape. */
	private final long windowMicros;

	private final Buffer buffer;

	/** The first entry of the view in {@link #buffer}. */
	private final int from;

	/** The end of the view in {@link #buffer}, exclusive. */
	private final int to;

	/**
	 * The time of the entries after the view; meaningful while {@link #tailCount} > 0.
	 */
	private final long tailTime;

	private final int tailCount;

	private SlidingLogState(long windowMicros, Buffer buffer, int from, int to, long tailTime, int tailCount) {
		this.windowMicros = windowMicros;
		this.buffer = buffer;
		this.from = from;
		this.to = to;
		this.tailTime = tailTime;
		this.tailCount = tailCount;
	}

	static SlidingLogState fresh(long windowMicros) {
		return new SlidingLogState(windowMicros, EMPTY, 0, 0, 0, 0);
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		SlidingLogState live = evict(now - spec.windowMicros());
		long limit = spec.limit();
		long size = live.size();
		// cost <= limit - size, as size + cost may overflow; size may exceed a lowered
		// limit.
		if (cost <= limit - size) {
			Decision allowed = Decision.allowed(spec, limit - size - cost, spec.windowMicros(), 0);
			return new Transition(allowed, live.append(now, (int) cost), this);
		}
		long retryAfter;
		if (cost > limit) {
			retryAfter = Decision.NEVER;
		}
		else {
			// The oldest (size + cost - limit) entries must leave the window.
			long mustExpire = live.at((int) (size + cost - limit) - 1);
			retryAfter = mustExpire + spec.windowMicros() - now;
		}
		return Transition.rejected(Decision.rejected(spec, limit - size, live.resetAfterMicros(spec, now), retryAfter),
				this);
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		SlidingLogState live = evict(now - spec.windowMicros());
		long size = live.size();
		long taken = charged(size, cost, spec.limit()) - size;
		return (taken == 0) ? live : live.append(now, (int) taken);
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		SlidingLogState live = evict(now - spec.windowMicros());
		if (cost < live.tailCount) {
			return new SlidingLogState(this.windowMicros, live.buffer, live.from, live.to, live.tailTime,
					live.tailCount - (int) cost);
		}
		// The newest entries go first: the whole tail, then the end of the view.
		long fromView = Math.min(cost - live.tailCount, live.to - live.from);
		return new SlidingLogState(this.windowMicros, live.buffer, live.from, live.to - (int) fromView, 0, 0);
	}

	@Override
	long available(LimitSpec spec, long now) {
		return spec.limit() - evict(now - spec.windowMicros()).size();
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long size = size();
		return (size > 0) ? at((int) size - 1) + spec.windowMicros() - now : 0;
	}

	@Override
	public long expiresAtMicros() {
		long size = size();
		return (size > 0) ? at((int) size - 1) + this.windowMicros : Long.MIN_VALUE;
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == Algorithm.SLIDING_LOG && spec.windowMicros() == this.windowMicros;
	}

	private long size() {
		return (long) (this.to - this.from) + this.tailCount;
	}

	/** The {@code i}-th entry, oldest first. */
	private long at(int i) {
		int inView = this.to - this.from;
		return (i < inView) ? this.buffer.times[this.from + i] : this.tailTime;
	}

	/**
	 * Returns the state without the entries at or before {@code threshold}: this one when
	 * there are none.
	 */
	private SlidingLogState evict(long threshold) {
		long[] times = this.buffer.times;
		int low = this.from;
		int high = this.to;
		// The first entry of the view after threshold, or to.
		while (low < high) {
			int mid = (low + high) >>> 1;
			if (times[mid] <= threshold) {
				low = mid + 1;
			}
			else {
				high = mid;
			}
		}
		boolean tailExpired = this.tailCount > 0 && low == this.to && this.tailTime <= threshold;
		if (low == this.from && !tailExpired) {
			return this;
		}
		return new SlidingLogState(this.windowMicros, this.buffer, low, this.to, this.tailTime,
				tailExpired ? 0 : this.tailCount);
	}

	/** Returns this state with {@code count} entries at {@code time} after the others. */
	private SlidingLogState append(long time, int count) {
		if (this.tailCount == 0 || this.tailTime == time) {
			return new SlidingLogState(this.windowMicros, this.buffer, this.from, this.to, time,
					this.tailCount + count);
		}
		int end = this.to + this.tailCount;
		if (this.buffer.claim(this.to, end)) {
			this.buffer.write(this.to, end, this.tailTime);
			return new SlidingLogState(this.windowMicros, this.buffer, this.from, end, time, count);
		}
		if (this.buffer.holds(this.to, end, this.tailTime)) {
			return new SlidingLogState(this.windowMicros, this.buffer, this.from, end, time, count);
		}
		int live = this.to - this.from;
		long[] times = new long[Math.max(INITIAL_CAPACITY, 2 * (live + this.tailCount))];
		System.arraycopy(this.buffer.times, this.from, times, 0, live);
		Arrays.fill(times, live, live + this.tailCount, this.tailTime);
		Buffer copy = new Buffer(times, live + this.tailCount);
		return new SlidingLogState(this.windowMicros, copy, 0, live + this.tailCount, time, count);
	}

	/**
	 * An append-only array of times shared by states. Slots below {@link #claimed} belong
	 * to the state that claimed them; {@link #written} tells how far their times are
	 * there to be read by a state that did not write them.
	 */
	private static final class Buffer {

		private static final VarHandle CLAIMED;

		private static final VarHandle WRITTEN;

		static {
			try {
				MethodHandles.Lookup lookup = MethodHandles.lookup();
				CLAIMED = lookup.findVarHandle(Buffer.class, "claimed", int.class);
				WRITTEN = lookup.findVarHandle(Buffer.class, "written", int.class);
			}
			catch (ReflectiveOperationException ex) {
				throw new ExceptionInInitializerError(ex);
			}
		}

		final long[] times;

		@SuppressWarnings("unused") // through CLAIMED
		private int claimed;

		@SuppressWarnings("unused") // through WRITTEN
		private int written;

		Buffer(long[] times, int length) {
			this.times = times;
			this.claimed = length;
			this.written = length;
		}

		/**
		 * Claims the slots {@code [start, end)} for the caller alone, when no state has
		 * claimed beyond {@code start} and they fit, and leaves them to be written by it.
		 */
		boolean claim(int start, int end) {
			return end <= this.times.length && CLAIMED.compareAndSet(this, start, end);
		}

		/**
		 * Writes the claimed slots {@code [start, end)} and makes them readable by other
		 * states. Claims are taken in order, and a claim at {@code start} is only made
		 * from a view that ends there, one built after the slots before it were written.
		 */
		void write(int start, int end, long time) {
			Arrays.fill(this.times, start, end, time);
			WRITTEN.setRelease(this, end);
		}

		/** Whether the slots {@code [start, end)} are written and hold {@code time}. */
		boolean holds(int start, int end, long time) {
			if ((int) WRITTEN.getAcquire(this) < end) {
				return false;
			}
			for (int i = start; i < end; i++) {
				if (this.times[i] != time) {
					return false;
				}
			}
			return true;
		}

	}

}
