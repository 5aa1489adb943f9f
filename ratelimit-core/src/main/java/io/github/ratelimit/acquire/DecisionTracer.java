package io.github.ratelimit.acquire;

import org.jspecify.annotations.Nullable;

/**
 * Follows each request the {@link Acquirer} decides, from its first store call to its
 * final result, for a tracing or observation library: the trace of a decision is current
 * on the thread that calls the store, so that a client library's span of the store call
 * (a Redis command) nests under it. Unlike a {@link RateLimitObserver}, which hears of
 * results only, a tracer brackets the store calls and the waits.
 * <p>
 * Called on the deciding thread; {@link DecisionTrace#stop stop} and
 * {@link DecisionTrace#error error} may be called on a store's I/O thread or the waiter's
 * executor. Must be quick and must not block.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface DecisionTracer {

	/**
	 * Starts following one request, before its first store call.
	 * @param request the request
	 * @return its trace, or {@code null} when it is not followed (e.g. nothing would
	 * record it): the acquirer then does nothing more for it
	 */
	@Nullable DecisionTrace start(PermitRequest request);

	/**
	 * The trace of one request's decision.
	 */
	interface DecisionTrace {

		/**
		 * Makes this trace current on the calling thread until the scope is closed, on
		 * that thread; the acquirer opens one around each store call.
		 * @return the scope
		 */
		Scope openScope();

		/**
		 * Starts a wait for a permit: the store rejected the request and its policy waits
		 * out the rejection before asking again.
		 * @param micros how long the wait is meant to last
		 * @return what ends the wait, run once when the wait is over (or cut short),
		 * possibly on another thread
		 */
		Runnable startWait(long micros);

		/**
		 * Ends the trace with the request's final result.
		 * @param result the result
		 */
		void stop(RateLimitResult result);

		/**
		 * Ends the trace with the store's failure to decide.
		 * @param failure what the store threw
		 */
		void error(RuntimeException failure);

		/**
		 * Ends the trace of a request that was not decided after all: the concurrency
		 * limit asked in the same store call had no permit free, so its rate limits were
		 * not asked. The default does nothing; a tracer that started something (a span)
		 * ends it here.
		 */
		default void discard() {
		}

	}

	/**
	 * Something that ends when closed, on the thread that opened it.
	 */
	@FunctionalInterface
	interface Scope extends AutoCloseable {

		/**
		 * Ends it; never throws.
		 */
		@Override
		void close();

	}

}
