package io.github.ratelimit.acquire;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.TimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Waiter#system} with an executor that refuses every task (a bounded executor that
 * is full): what would have run there runs on the thread that hands it over, so that a
 * decision made is not lost to the executor.
 */
class SystemWaiterTests {

	private static final Executor FULL = (task) -> {
		throw new RejectedExecutionException("full");
	};

	private final Waiter waiter = Waiter.system(FULL, TimeSource.monotonic());

	@Test
	void aTaskTheExecutorRefusesRunsOnTheCallingThread() {
		Thread[] ranOn = new Thread[1];
		this.waiter.executor().execute(() -> ranOn[0] = Thread.currentThread());
		assertThat(ranOn[0]).isSameAs(Thread.currentThread());
	}

	@Test
	void aDelayEndsThoughTheExecutorRefusesItsTask() throws Exception {
		CompletableFuture<Void> delay = this.waiter.delay(1000).toCompletableFuture();
		delay.get(30, TimeUnit.SECONDS);
		assertThat(delay).isCompleted();
	}

}
