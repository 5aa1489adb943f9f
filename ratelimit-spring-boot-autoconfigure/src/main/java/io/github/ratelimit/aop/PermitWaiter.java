package io.github.ratelimit.aop;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

/**
 * How the interceptor waits: for a permit ({@code onLimit = WAIT}) and for a leaky bucket
 * slot. Blocking methods sleep; methods returning {@code CompletionStage}, {@code Mono}
 * or {@code Flux} get a stage that completes later, so no thread is held. A separate
 * interface so tests can move a manual clock instead of sleeping.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface PermitWaiter {

	/**
	 * Blocks the calling thread.
	 * @param micros how long, in microseconds
	 * @throws InterruptedException when the thread is interrupted
	 */
	void sleep(long micros) throws InterruptedException;

	/**
	 * Returns a stage that completes on {@link #executor()} once {@code micros} have
	 * passed, without blocking any thread meanwhile.
	 * @param micros how long, in microseconds
	 * @return the stage
	 */
	CompletionStage<Void> delay(long micros);

	/**
	 * Returns the executor that runs the work following an asynchronous decision or wait
	 * (the method call, refunds), so that it never runs on a store's I/O thread.
	 * @return the executor
	 */
	Executor executor();

	/**
	 * Returns a waiter on the system clock whose delays and continuations run on the
	 * common fork-join pool.
	 * @return the waiter
	 */
	static PermitWaiter system() {
		return system(ForkJoinPool.commonPool());
	}

	/**
	 * Returns a waiter on the system clock whose delays and continuations run on
	 * {@code executor}.
	 * @param executor the executor, e.g. the application's task executor
	 * @return the waiter
	 */
	static PermitWaiter system(Executor executor) {
		return new SystemPermitWaiter(executor);
	}

}
