package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Durations;
import io.github.ratelimit.store.PartialStoreOutageException;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;

/**
 * Sends a store's calls through its runner and waits for their replies, no longer than
 * the connect timeout and the timeout together; a call that fails, fails with the
 * {@link RateLimitStoreException} the failure-mode layer reads.
 */
final class RedisScriptCalls {

	private final ScriptRunner runner;

	private final Duration timeout;

	private final Duration connectTimeout;

	/** The longest any call waits: for the connection, then for the reply. */
	private final long maxWaitNanos;

	/**
	 * Creates the calls of one store.
	 * @param runner runs the script
	 * @param timeout the longest Redis may take to answer a sent call
	 * @param connectTimeout the longest wait for a connection being made
	 */
	RedisScriptCalls(ScriptRunner runner, Duration timeout, Duration connectTimeout) {
		this.runner = runner;
		this.timeout = timeout;
		this.connectTimeout = connectTimeout;
		this.maxWaitNanos = connectTimeout.toNanos() + timeout.toNanos();
	}

	/**
	 * Sends a call.
	 * @param call the call
	 * @param async whether the calling thread must not block
	 * @param lateReply told of a reply that arrived after the call had failed, or
	 * {@code null}
	 * @return the reply
	 */
	CompletableFuture<List<Object>> send(RedisDecisionProtocol.Call call, boolean async,
			@Nullable Consumer<List<Object>> lateReply) {
		return async ? this.runner.runAsync(call.keys(), call.args(), lateReply)
				: this.runner.run(call.keys(), call.args(), lateReply);
	}

	/**
	 * Sends a call whose late reply does not matter, and waits for its reply.
	 * @param call the call
	 * @return the reply
	 */
	List<Object> call(RedisDecisionProtocol.Call call) {
		return await(send(call, false, null));
	}

	/**
	 * Waits for a reply.
	 * @param <T> the reply's type
	 * @param reply the reply
	 * @return the reply
	 * @throws RateLimitStoreException when the call failed or the wait timed out
	 */
	<T> T await(CompletableFuture<T> reply) {
		try {
			// The runner times the call out; this bound only guards against an I/O thread
			// that never runs again.
			return reply.get(this.maxWaitNanos, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			reply.completeExceptionally(ex);
			throw failure(ex);
		}
		catch (ExecutionException ex) {
			throw failure(ScriptRunner.unwrap(causeOf(ex)));
		}
		catch (CancellationException ex) {
			// Not wrapped: a future completed with a cancellation throws it as it is.
			throw failure(ex);
		}
		catch (InterruptedException ex) {
			reply.completeExceptionally(ex);
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis", ex, false);
		}
	}

	/**
	 * Returns the cause an {@link ExecutionException} wraps, or itself.
	 * @param ex the exception
	 * @return its cause
	 */
	static Throwable causeOf(ExecutionException ex) {
		return (ex.getCause() != null) ? ex.getCause() : ex;
	}

	/**
	 * Reads a reply once it comes, without blocking.
	 * @param <T> what the reply is read into
	 * @param reply the reply
	 * @param read reads it
	 * @return what it was read into; failing as {@link #failure} says, at the latest once
	 * the longest wait has passed
	 */
	<T> CompletableFuture<T> whenReplied(CompletableFuture<List<Object>> reply, Function<List<Object>, T> read) {
		return bounded(reply).handle((result, ex) -> {
			if (ex != null) {
				throw failure(ScriptRunner.unwrap(ex));
			}
			return read.apply(result);
		});
	}

	/**
	 * Says why a call failed, as the store reports it: a timeout, an outage of part of a
	 * Redis Cluster, an outcome Redis may have run, or a plain failure, each saying which
	 * setting bounds it.
	 * @param cause what the call failed with, unwrapped
	 * @return the exception the store throws
	 */
	RateLimitStoreException failure(Throwable cause) {
		if (cause instanceof RateLimitStoreException storeException) {
			return storeException;
		}
		if (cause instanceof ScriptTimeoutException timeout) {
			boolean sent = timeout.waitedFor() == ScriptTimeoutException.Wait.REPLY;
			String message = sent
					? "Redis did not answer within " + Durations.readable(this.timeout) + " (ratelimit.redis.timeout)"
					: "No Redis connection within " + Durations.readable(this.connectTimeout)
							+ " (ratelimit.redis.connect-timeout)";
			// Sent, so Redis may have run it: the fallback counts its permits as taken
			// there (the strict side). An instance whose last reply for a key came early
			// in a burst starts its fallback from more than remains; the calls it sent
			// since take that back (a stall mid-burst admitted up to 26 of 20 without).
			// A late reply that allowed gives the permits back in Redis (the store's
			// late refunds).
			return new RateLimitStoreException(message, cause, true, sent);
		}
		if (cause instanceof TimeoutException) {
			return new RateLimitStoreException(
					"No answer from Redis within " + Durations.readable(Duration.ofNanos(this.maxWaitNanos))
							+ " (ratelimit.redis.connect-timeout + ratelimit.redis.timeout)",
					cause, true);
		}
		if (cause instanceof ClusterMasterDownException down) {
			return new PartialStoreOutageException(down.getMessage() + "; the rate limit call failed", down,
					down.mayHaveRun());
		}
		String clusterDown = clusterDown(cause);
		if (clusterDown != null) {
			// A Redis Cluster node that does not serve the key's slot now: one whose
			// master is down (cluster-require-full-coverage yes, until a replica takes
			// over) or that just restarted. Fast, and not every node says so: the
			// failure mode answers for this key without opening the breaker for all.
			return new PartialStoreOutageException(
					"Redis Cluster answered " + clusterDown + " for the key's slot; the rate limit call failed", cause);
		}
		if (cause instanceof CancellationException) {
			// Lettuce cancels the calls still buffered on a connection that closes, when
			// its replacement is made: they were never written.
			return new StoreReconnectedException(
					"The Redis connection closed and was replaced before the rate limit call was sent; not sent",
					cause);
		}
		if (cause instanceof ScriptOutcomeUnknownException unknown) {
			return new RateLimitStoreException(
					RedisFailureCause.of(Objects.requireNonNull(unknown.getCause())).describe()
							+ " after the rate limit call was sent; Redis may have run it",
					unknown, false, true);
		}
		return new RateLimitStoreException(RedisFailureCause.of(cause).describe() + "; the rate limit call failed",
				cause, false);
	}

	/**
	 * The {@code CLUSTERDOWN} error reply in {@code failure}'s causes (Lettuce's
	 * exception, or one a Spring Data Redis driver wrapped it in), or {@code null}.
	 */
	private static @Nullable String clusterDown(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			int at = (message != null) ? message.indexOf("CLUSTERDOWN") : -1;
			if (message != null && at >= 0) {
				return message.substring(at).lines().findFirst().orElse("CLUSTERDOWN");
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return null;
	}

	/**
	 * Returns how many times the connection was made anew (see
	 * {@link ScriptRunner#reconnects()}).
	 * @return the count
	 */
	long reconnects() {
		return this.runner.reconnects();
	}

	/**
	 * Returns {@code reply}, failed with a {@link TimeoutException} once the longest wait
	 * has passed without it (see {@link ScriptRunner#within}): the guard against an I/O
	 * thread that never runs again, since the runner times calls out well before.
	 * @param <T> the reply's type
	 * @param reply the reply
	 * @return {@code reply}
	 */
	<T> CompletableFuture<T> bounded(CompletableFuture<T> reply) {
		return this.runner.within(reply, this.maxWaitNanos);
	}

}
