package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

/**
 * Keeps a fixed number of asynchronous calls in flight: each chain issues its next call
 * when the previous one completes, so the load is closed-loop at exactly
 * {@code concurrency} calls outstanding.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class LoadLoop {

	/**
	 * One asynchronous call on the key with the given index.
	 */
	@FunctionalInterface
	interface AsyncCall {

		CompletionStage<?> call(int keyIndex);

	}

	/**
	 * What one run did.
	 *
	 * @param opsPerSecond completed calls per second within the measured window
	 * @param completed every call completed, including the warm edges
	 * @param failed calls that completed exceptionally
	 * @param firstFailure the first failure, if any
	 */
	record Result(double opsPerSecond, long completed, long failed, String firstFailure) {

	}

	private LoadLoop() {
	}

	/**
	 * Runs {@code call} with {@code concurrency} calls in flight over {@code keys} keys,
	 * measures for {@code duration}, then waits for every call to finish.
	 * @param call the call
	 * @param concurrency calls in flight
	 * @param keys number of distinct keys, visited in a scrambled order
	 * @param duration measured time
	 * @return the result
	 * @throws InterruptedException when interrupted
	 */
	static Result run(AsyncCall call, int concurrency, int keys, Duration duration) throws InterruptedException {
		Chains chains = new Chains(call, concurrency, keys);
		chains.start();
		long c0 = chains.completed.sum();
		long t0 = System.nanoTime();
		Thread.sleep(duration.toMillis());
		long c1 = chains.completed.sum();
		long t1 = System.nanoTime();
		chains.stop();
		double opsPerSecond = (c1 - c0) * 1e9 / (t1 - t0);
		String failure = chains.firstFailure;
		return new Result(opsPerSecond, chains.completed.sum(), chains.failed.sum(), (failure != null) ? failure : "");
	}

	private static final class Chains {

		private final AsyncCall call;

		private final int concurrency;

		private final ScrambledKeys keys;

		private final LongAdder completed = new LongAdder();

		private final LongAdder failed = new LongAdder();

		private final CountDownLatch finished;

		private volatile boolean stopped;

		private volatile @Nullable String firstFailure;

		Chains(AsyncCall call, int concurrency, int keys) {
			this.call = call;
			this.concurrency = concurrency;
			this.keys = new ScrambledKeys(keys);
			this.finished = new CountDownLatch(concurrency);
		}

		/**
		 * Starts each chain on a thread of its own: a chain whose calls complete at once
		 * keeps the thread it runs on until the load stops, so the caller's thread must
		 * not be one of them.
		 */
		void start() {
			for (int i = 0; i < this.concurrency; i++) {
				Thread thread = new Thread(this::next, "load-chain-" + i);
				thread.setDaemon(true);
				thread.start();
			}
		}

		void stop() throws InterruptedException {
			this.stopped = true;
			if (!this.finished.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Calls still in flight 30s after the load stopped");
			}
		}

		/**
		 * Issues calls until one is still in flight. A call that completes at once (an
		 * answer from a local cache) is counted here and followed by the next in a loop:
		 * completing it through a callback would nest one stack frame per call.
		 */
		private void next() {
			while (true) {
				if (this.stopped) {
					this.finished.countDown();
					return;
				}
				int key = this.keys.next();
				CompletableFuture<?> call;
				try {
					call = this.call.call(key).toCompletableFuture();
				}
				catch (RuntimeException ex) {
					onFailure(ex);
					continue;
				}
				if (!call.isDone()) {
					call.whenComplete((result, ex) -> {
						onCompleted(ex);
						next();
					});
					return;
				}
				onCompleted(call.handle((result, ex) -> ex).join());
			}
		}

		private void onCompleted(@Nullable Throwable failure) {
			if (failure != null) {
				onFailure(failure);
			}
			else {
				this.completed.increment();
			}
		}

		private void onFailure(Throwable ex) {
			this.failed.increment();
			if (this.firstFailure == null) {
				this.firstFailure = ex.toString();
			}
			// A benchmark that fails measures nothing: stop, and let the driver report
			// it.
			this.stopped = true;
		}

	}

}
