package io.github.ratelimit.acquire;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.TimeSource;

/**
 * A {@link Waiter} in virtual time, on a {@link ManualTimeSource}: a sleep moves the
 * clock at once (and is recorded), a delay stays pending until the test releases it (or
 * passes at once, when created with {@link #releasingDelays}), and continuations run on
 * the releasing thread. Tests see every wait and never wait themselves.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ManualWaiter implements Waiter {

	private final ManualTimeSource clock;

	private final boolean releaseDelays;

	private final List<Long> sleeps = new ArrayList<>();

	private final List<Long> delays = new ArrayList<>();

	private final Deque<PendingDelay> pending = new ArrayDeque<>();

	private Runnable onSleep = () -> {
	};

	/**
	 * Creates a waiter whose delays stay pending until {@link #releaseNext()}.
	 * @param clock the clock, moved by every wait
	 */
	public ManualWaiter(ManualTimeSource clock) {
		this(clock, false);
	}

	private ManualWaiter(ManualTimeSource clock, boolean releaseDelays) {
		this.clock = clock;
		this.releaseDelays = releaseDelays;
	}

	/**
	 * Creates a waiter whose delays pass at once, moving the clock.
	 * @param clock the clock
	 * @return the waiter
	 */
	public static ManualWaiter releasingDelays(ManualTimeSource clock) {
		return new ManualWaiter(clock, true);
	}

	@Override
	public TimeSource clock() {
		return this.clock;
	}

	@Override
	public void sleep(long micros) throws InterruptedException {
		Runnable action;
		synchronized (this) {
			this.sleeps.add(micros);
			action = this.onSleep;
		}
		this.clock.advanceMicros(micros);
		action.run();
	}

	@Override
	public CompletionStage<Void> delay(long micros) {
		synchronized (this) {
			this.delays.add(micros);
			if (!this.releaseDelays) {
				CompletableFuture<Void> future = new CompletableFuture<>();
				this.pending.add(new PendingDelay(micros, future));
				return future;
			}
		}
		this.clock.advanceMicros(micros);
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public Executor executor() {
		return Runnable::run;
	}

	/**
	 * Runs {@code action} at the end of each sleep, after the clock moved: e.g. another
	 * caller taking the permit being waited for.
	 * @param action the action
	 */
	public synchronized void onSleep(Runnable action) {
		this.onSleep = action;
	}

	/**
	 * Returns every sleep so far, in microseconds.
	 * @return the sleeps
	 */
	public synchronized List<Long> sleeps() {
		return List.copyOf(this.sleeps);
	}

	/**
	 * Returns every delay asked for so far, in microseconds.
	 * @return the delays
	 */
	public synchronized List<Long> delays() {
		return List.copyOf(this.delays);
	}

	/**
	 * Returns the delays not released yet, oldest first, in microseconds.
	 * @return the pending delays
	 */
	public synchronized List<Long> pendingDelays() {
		return this.pending.stream().map(PendingDelay::micros).toList();
	}

	/**
	 * Lets the oldest pending delay pass: moves the clock by it and completes it.
	 * @return the delay released, in microseconds
	 * @throws IllegalStateException when no delay is pending
	 */
	public long releaseNext() {
		PendingDelay delay;
		synchronized (this) {
			delay = this.pending.poll();
		}
		if (delay == null) {
			throw new IllegalStateException("No delay is pending");
		}
		this.clock.advanceMicros(delay.micros());
		delay.future().complete(null);
		return delay.micros();
	}

	private record PendingDelay(long micros, CompletableFuture<Void> future) {
	}

}
