package io.github.ratelimit.concurrency;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Renews the leases of the permits this JVM holds, each every third of its lease, so a
 * long call keeps its permit and a dead one loses it within a lease. A renewal that finds
 * the lease gone marks the permit {@link ConcurrencyPermit#leaseLost() lost} and stops;
 * one the store cannot answer is tried again at the next turn, until the lease has run
 * out by this JVM's clock (the permit is then lost too). One daemon thread for all
 * permits: a renewal is one short store call.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class LeaseRenewer implements AutoCloseable {

	private static final Logger logger = Logger.getLogger(LeaseRenewer.class.getName());

	/** The first pause before a failed call is made again. */
	private static final long FIRST_RETRY_MICROS = TimeUnit.MILLISECONDS.toMicros(100);

	/** The longest pause between two tries of a failed call. */
	private static final long LAST_RETRY_MICROS = TimeUnit.SECONDS.toMicros(1);

	private final ScheduledExecutorService scheduler;

	/**
	 * Creates a renewer with a thread of its own.
	 */
	public LeaseRenewer() {
		this.scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-lease-renewer");
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Renews a permit until it is released.
	 * @param lease renews the permit's lease once, in the store that holds it
	 * @param limit its limit
	 * @param permit the permit, acquired
	 * @param observer told when the lease is found lost
	 * @return what stops the renewals
	 */
	Runnable renew(Renewal lease, ConcurrencyLimit limit, ConcurrencyPermit permit, ConcurrencyObserver observer) {
		long every = Math.max(1, limit.leaseMicros() / 3);
		ScheduledFuture<?>[] task = new ScheduledFuture<?>[1];
		Runnable renewal = () -> {
			if (!permit.held()) {
				return;
			}
			long asked = System.nanoTime();
			try {
				if (lease.renew()) {
					permit.renewed(asked);
					return;
				}
			}
			catch (RuntimeException ex) {
				if (!permit.leaseExpired()) {
					logger.log(Level.FINE, "Could not renew the lease of " + permit + "; trying again", ex);
					return;
				}
				logger.log(Level.WARNING, "Could not renew the lease of " + permit + " within its lease", ex);
			}
			permit.lost();
			observer.onLeaseLost(permit.bucket());
			task[0].cancel(false);
		};
		synchronized (task) {
			task[0] = this.scheduler.scheduleWithFixedDelay(renewal, every, every, TimeUnit.MICROSECONDS);
		}
		return () -> task[0].cancel(false);
	}

	/**
	 * Makes a store call again, off the caller's thread, until it answers or the permit's
	 * lease has run out by this JVM's clock (the store takes the permit back then
	 * anyway): after 100 ms, then after twice as long each time, up to a second.
	 * @param call the call that failed, e.g. a release
	 * @param permit the permit it is for
	 * @param gaveUp told the last failure when the lease ran out first
	 */
	void retryWithinLease(Runnable call, ConcurrencyPermit permit, Consumer<RuntimeException> gaveUp) {
		retry(call, permit, gaveUp, FIRST_RETRY_MICROS);
	}

	private void retry(Runnable call, ConcurrencyPermit permit, Consumer<RuntimeException> gaveUp, long delay) {
		try {
			this.scheduler.schedule(() -> {
				try {
					call.run();
				}
				catch (RuntimeException ex) {
					if (permit.leaseExpired()) {
						gaveUp.accept(ex);
					}
					else {
						retry(call, permit, gaveUp, Math.min(LAST_RETRY_MICROS, delay * 2));
					}
				}
			}, delay, TimeUnit.MICROSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Closed: the permit's lease ends at its time.
		}
	}

	/**
	 * Runs a store call off the caller's thread, on the renewer's.
	 * @param task the task
	 */
	void runSoon(Runnable task) {
		try {
			this.scheduler.execute(task);
		}
		catch (RejectedExecutionException ex) {
			// Closed: the permits' leases end at their time.
		}
	}

	/**
	 * Renews one permit's lease.
	 */
	@FunctionalInterface
	interface Renewal {

		/**
		 * Renews the lease once.
		 * @return {@code false} when the holder no longer holds the permit
		 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
		 * answer
		 */
		boolean renew();

	}

	/**
	 * Stops renewing: every lease then ends at its time.
	 */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
	}

}
