package io.github.ratelimit.aop;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The production {@link PermitWaiter}: sleeps with {@link Thread#sleep} and delays with
 * {@link CompletableFuture#delayedExecutor}, whose timer thread only hands the stage over
 * to the executor.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class SystemPermitWaiter implements PermitWaiter {

	private final Executor executor;

	SystemPermitWaiter(Executor executor) {
		this.executor = Objects.requireNonNull(executor, "'executor' must not be null");
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
