package io.github.ratelimit.acquire;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The executor asynchronous decisions continue on, which runs a task on the calling
 * thread (a store's I/O thread, a timer thread) when the executor refuses it: a bounded
 * executor that is full must not fail a request that was decided (it would reach the
 * client as a 500), nor leave a delayed one waiting for good (a timer that cannot hand
 * its task over drops it). Says so at WARN, at most once a minute, with how many tasks
 * ran on the calling thread.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class OverflowingExecutor implements Executor {

	private static final Logger logger = Logger.getLogger(OverflowingExecutor.class.getName());

	private static final long LOG_INTERVAL_NANOS = 60_000_000_000L;

	private final Executor executor;

	private final AtomicLong overflowed = new AtomicLong();

	private final AtomicLong loggedAt = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);

	OverflowingExecutor(Executor executor) {
		this.executor = Objects.requireNonNull(executor, "'executor' must not be null");
	}

	@Override
	public void execute(Runnable task) {
		try {
			this.executor.execute(task);
		}
		catch (RejectedExecutionException ex) {
			overflowed(ex);
			task.run();
		}
	}

	/**
	 * Returns how many tasks ran on the calling thread because the executor refused them.
	 */
	long overflowed() {
		return this.overflowed.get();
	}

	private void overflowed(RejectedExecutionException ex) {
		long count = this.overflowed.incrementAndGet();
		long now = System.nanoTime();
		long last = this.loggedAt.get();
		if (now - last >= LOG_INTERVAL_NANOS && this.loggedAt.compareAndSet(last, now)) {
			logger.log(Level.WARNING, "The executor rate limit decisions continue on refused a task (" + count
					+ " so far), which ran on the thread that completed the decision instead. Give it more "
					+ "threads or a longer queue (in Spring Boot, spring.task.execution.pool.*), or define a Waiter "
					+ "bean with an executor of its own: " + this.executor, ex);
		}
	}

	@Override
	public String toString() {
		return this.executor.toString();
	}

}
