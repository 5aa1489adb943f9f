package io.github.ratelimit.acquire;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

import io.github.ratelimit.TimeSource;

/**
 * The time calls wait in, and how they wait: for a permit (a rejection that waiting can
 * turn into an allowance) and for a leaky bucket slot. Blocking callers sleep; callers
 * that must not block get a stage that completes later. One interface for the clock and
 * the waits, so that a test replaces both with a virtual clock that moves when a call
 * waits, and nothing sleeps wall-clock time.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface Waiter {

	/**
	 * Returns the clock that deadlines ({@code maxWait}) and delays are measured on.
	 * @return the clock
	 */
	TimeSource clock();

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
	 * Returns the executor that runs what follows an asynchronous decision or wait (the
	 * caller's continuation, refunds), so that it never runs on a store's I/O thread.
	 * @return the executor
	 */
	Executor executor();

	/**
	 * Returns a waiter on the system's monotonic clock ({@link TimeSource#monotonic()},
	 * which a wall clock step cannot shorten or stretch a wait by) whose continuations
	 * run on the common fork-join pool.
	 * @return the waiter
	 */
	static Waiter system() {
		return system(ForkJoinPool.commonPool());
	}

	/**
	 * Returns a waiter on the system's monotonic clock whose continuations run on
	 * {@code executor}.
	 * @param executor the executor, e.g. the application's task executor
	 * @return the waiter
	 */
	static Waiter system(Executor executor) {
		return system(executor, TimeSource.monotonic());
	}

	/**
	 * Returns a waiter that sleeps real time, measures it on {@code clock}, and runs
	 * continuations on {@code executor}.
	 * @param executor the executor, e.g. the application's task executor
	 * @param clock the clock, which must advance at the rate of real time
	 * @return the waiter
	 */
	static Waiter system(Executor executor, TimeSource clock) {
		return new SystemWaiter(executor, clock);
	}

}
