package io.github.ratelimit.aop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.github.ratelimit.ManualTimeSource;

/**
 * A {@link PermitWaiter} on a {@link ManualTimeSource}: a sleep moves the clock at once
 * (and is recorded), a delay stays pending until the test releases it, and continuations
 * run on the releasing thread. Tests see every wait without waiting.
 */
final class ManualPermitWaiter implements PermitWaiter {

	private final ManualTimeSource clock;

	private final List<Long> sleeps = new ArrayList<>();

	private final Deque<PendingDelay> delays = new ArrayDeque<>();

	private Runnable onSleep = () -> {
	};

	ManualPermitWaiter(ManualTimeSource clock) {
		this.clock = clock;
	}

	@Override
	public synchronized void sleep(long micros) {
		this.sleeps.add(micros);
		this.clock.advanceMicros(micros);
		this.onSleep.run();
	}

	@Override
	public synchronized CompletionStage<Void> delay(long micros) {
		CompletableFuture<Void> future = new CompletableFuture<>();
		this.delays.add(new PendingDelay(micros, future));
		return future;
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
	synchronized void onSleep(Runnable action) {
		this.onSleep = action;
	}

	synchronized List<Long> sleeps() {
		return List.copyOf(this.sleeps);
	}

	synchronized List<Long> pendingDelays() {
		return this.delays.stream().map(PendingDelay::micros).toList();
	}

	/**
	 * Lets the oldest pending delay pass: moves the clock by it and completes it.
	 * @return the delay released, in microseconds
	 */
	long releaseNext() {
		PendingDelay delay;
		synchronized (this) {
			delay = this.delays.poll();
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
