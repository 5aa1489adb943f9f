package io.github.ratelimit.sample.ops;

import java.util.ArrayList;
import java.util.List;

/**
 * Loads the machine: one thread per core spinning until closed.
 */
final class BusyCores implements AutoCloseable {

	private final List<Thread> threads = new ArrayList<>();

	private volatile boolean running = true;

	BusyCores() {
		int cores = Runtime.getRuntime().availableProcessors();
		for (int i = 0; i < cores; i++) {
			Thread thread = new Thread(this::spin, "busy-core-" + i);
			thread.setDaemon(true);
			this.threads.add(thread);
			thread.start();
		}
	}

	int threads() {
		return this.threads.size();
	}

	private void spin() {
		long sink = 0;
		while (this.running) {
			sink += System.nanoTime() % 7;
		}
		if (sink == 42) {
			System.out.print("");
		}
	}

	@Override
	public void close() {
		this.running = false;
		for (Thread thread : this.threads) {
			try {
				thread.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
