package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.spring.RateLimitResult;
import io.github.ratelimit.spring.RateLimitService;

/**
 * Takes the permits of a blocking call on the calling thread: decides each planned limit
 * in order, sleeps and decides again for {@code WAIT}, gives back what earlier buckets
 * granted when a later one rejects, and sleeps out a leaky bucket delay.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class BlockingLimiter {

	private final RateLimitService service;

	private final TimeSource clock;

	private final PermitWaiter waiter;

	private final Refunds refunds;

	BlockingLimiter(RateLimitService service, TimeSource clock, PermitWaiter waiter, Refunds refunds) {
		this.service = service;
		this.clock = clock;
		this.waiter = waiter;
		this.refunds = refunds;
	}

	/**
	 * Takes every permit of a call, or none.
	 * @param plan the planned limits, in order
	 * @return the acquisition
	 */
	Acquisition acquire(List<PlannedLimit> plan) {
		List<Permit> permits = new ArrayList<>(plan.size());
		for (PlannedLimit planned : plan) {
			Permit permit;
			try {
				permit = decide(planned);
			}
			catch (RuntimeException ex) {
				// The store failed: what earlier buckets granted must not count either.
				this.refunds.rollback(permits);
				throw ex;
			}
			if (!permit.proceeds()) {
				this.refunds.rollback(permits);
				return Acquisition.rejected(permit);
			}
			permits.add(permit);
		}
		return Acquisition.granted(permits);
	}

	/**
	 * Sleeps until the leaky bucket slots of a granted call arrive. The slots are taken
	 * already, so an interrupt does not cut the wait short (that would let a burst
	 * through); it is restored for the method to see.
	 * @param acquisition the granted acquisition
	 */
	void awaitDelay(Acquisition acquisition) {
		long proceedAt = acquisition.proceedAtMicros();
		if (proceedAt == Long.MIN_VALUE) {
			return;
		}
		boolean interrupted = false;
		long remaining = proceedAt - this.clock.nowMicros();
		while (remaining > 0) {
			try {
				this.waiter.sleep(remaining);
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
			remaining = proceedAt - this.clock.nowMicros();
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	private Permit decide(PlannedLimit planned) {
		RateLimitedOperation operation = planned.operation();
		long deadline = operation.deadline(this.clock.nowMicros());
		while (true) {
			long now = this.clock.nowMicros();
			RateLimitResult result = this.service.decide(operation.bucket(), planned.key(), planned.limits(),
					planned.cost(), operation.maxDelay(deadline, now));
			Permit permit = new Permit(planned, result, now);
			if (permit.proceeds()) {
				return permit;
			}
			long wait = operation.retryWait(result.decision(), deadline - this.clock.nowMicros());
			if (wait < 0) {
				return permit;
			}
			try {
				this.waiter.sleep(wait);
			}
			catch (InterruptedException ex) {
				// The caller is being told to stop: give up waiting, keep the flag.
				Thread.currentThread().interrupt();
				return permit;
			}
		}
	}

}
