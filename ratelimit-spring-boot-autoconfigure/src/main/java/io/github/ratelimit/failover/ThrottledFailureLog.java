package io.github.ratelimit.failover;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;

/**
 * Logs store failures without flooding: the first failure with its stack trace, then at
 * most one summary line per interval with the number of failures since the last line.
 */
final class ThrottledFailureLog {

	private final Log logger;

	private final long intervalNanos;

	private final AtomicLong suppressed = new AtomicLong();

	private final AtomicLong lastLoggedNanos = new AtomicLong(Long.MIN_VALUE);

	ThrottledFailureLog(Log logger, long interval, TimeUnit unit) {
		this.logger = logger;
		this.intervalNanos = unit.toNanos(interval);
	}

	void failure(String what, Throwable cause) {
		long now = System.nanoTime();
		long last = this.lastLoggedNanos.get();
		boolean first = last == Long.MIN_VALUE;
		if ((first || now - last >= this.intervalNanos) && this.lastLoggedNanos.compareAndSet(last, now)) {
			long count = this.suppressed.getAndSet(0) + 1;
			if (first) {
				this.logger.warn(what + ": " + cause.getMessage(), cause);
			}
			else {
				this.logger.warn(what + " (" + count + " failures since the last report): " + cause.getMessage());
			}
		}
		else {
			this.suppressed.incrementAndGet();
		}
	}

}
