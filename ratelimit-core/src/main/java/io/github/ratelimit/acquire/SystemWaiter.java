package io.github.ratelimit.acquire;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.TimeSource;

/**
 * The production {@link Waiter}: sleeps with {@link Thread#sleep} and delays with
 * {@link CompletableFuture#delayedExecutor}, whose timer thread only hands the stage over
 * to the executor. A task the executor refuses runs on the thread that hands it over
 * ({@link OverflowingExecutor}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class SystemWaiter implements Waiter {

	private final Executor executor;

	private final TimeSource clock;

	SystemWaiter(Executor executor, TimeSource clock) {
		this.executor = new OverflowingExecutor(Objects.requireNonNull(executor, "'executor' must not be null"));
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	@Override
	public TimeSource clock() {
		return this.clock;
	}

	@Override
	public void sleep(long micros) throws InterruptedException {
		TimeUnit.MICROSECONDS.sleep(micros);
	}

	@Override
	public CompletionStage<Void> delay(long micros) {
		Executor delayed = CompletableFuture.delayedExecutor(micros, TimeUnit.MICROSECONDS, this.executor);
		return CompletableFuture.runAsync(() -> {
		}, delayed);
	}

	@Override
	public Executor executor() {
		return this.executor;
	}

}
