package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.netty.buffer.ByteBuf;
import io.netty.util.Timeout;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.jspecify.annotations.Nullable;

/**
 * One {@code EVALSHA} whose reply must arrive within the command timeout of being sent,
 * as the connection's I/O thread sees it.
 * <p>
 * Why on the I/O thread, and only from the send: on a busy host (a cold JVM at startup, a
 * burst on two cores) this process may not run for a while, neither the caller's thread
 * nor the I/O thread. A timer on the caller's side then fires after Redis has long
 * answered, with the reply waiting in the socket, and a healthy Redis is abandoned for
 * the fallback. Here the clock starts when the command is written to the socket, and at
 * the deadline the I/O thread checks once more after its next read of the socket (Netty
 * reads ready sockets before it runs due tasks, and a task scheduled from a task runs
 * only after the next read): a command times out only when, after its deadline, the
 * socket held no reply. Time this process spends unable to run counts against no one.
 * <p>
 * The outcome goes to {@code call}, shared by the commands of one script call (a
 * {@code NOSCRIPT} retry sends a second command). A reply that finds {@code call} already
 * completed is a late reply: the command ran in Redis after its caller moved on.
 * <p>
 * Every timer a command starts is cancelled once it completes: a pending timer task holds
 * the command, and through its call the whole batch with its decisions. Left to run out,
 * the timers of one command timeout's worth of calls kept every one of those objects
 * reachable (with a timeout of 2 s and 64 requests in flight on one key: 1.4 million
 * decisions, 160 MB), for the garbage collector to copy again and again.
 */
final class ScriptCommand extends AsyncCommand<String, String, List<Object>> {

	private final ScriptCall call;

	private final long timeoutNanos;

	private final ClientResources resources;

	/** How often this command was written; a resend restarts its clock. */
	private volatile int sends;

	/** The reply deadline of the latest send, on the I/O thread. */
	private volatile @Nullable Future<?> deadline;

	/** The reply deadline of the latest send, off a Netty event loop. */
	private volatile @Nullable Timeout timerDeadline;

	/** What fails the call if the command is never sent; see {@link #guardUntilSent}. */
	private volatile @Nullable Timeout unsentGuard;

	ScriptCommand(String sha1, String[] keys, String[] args, ScriptCall call, long timeoutNanos,
			ClientResources resources) {
		super(new Command<>(CommandType.EVALSHA, new NestedMultiOutput<>(StringCodec.UTF8),
				new CommandArgs<>(StringCodec.UTF8).add(sha1).add(keys.length).addKeys(keys).addValues(args)));
		this.call = call;
		this.timeoutNanos = timeoutNanos;
		this.resources = resources;
		whenComplete((reply, ex) -> {
			cancelTimers();
			if (ex == null) {
				call.reply(reply);
			}
			else {
				call.failed(this, ex);
			}
		});
	}

	/**
	 * Returns whether the command was written to a connection.
	 * @return {@code true} once sent
	 */
	boolean sent() {
		return this.sends > 0;
	}

	/**
	 * Fails the call through {@code guard} while the command has not been sent (a
	 * connection that closed as it was dispatched keeps it, unsent, for a reconnect);
	 * once it is sent, its reply deadline takes over, and the guard is cancelled.
	 * @param guard the timer task that fails the call
	 */
	void guardUntilSent(Timeout guard) {
		this.unsentGuard = guard;
		// Sent meanwhile (encode read no guard yet), or already done: cancel it here.
		if (sent() || isDone()) {
			guard.cancel();
		}
	}

	@Override
	public void encode(ByteBuf buf) {
		super.encode(buf);
		int send = ++this.sends;
		// Sent: the guard is done with, and so is an earlier send's deadline.
		cancelTimers();
		EventExecutor ioThread = ThreadExecutorMap.currentExecutor();
		if (ioThread != null) {
			this.deadline = ioThread.schedule(() -> deadline(ioThread, send), this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
		else {
			// Not on a Netty event loop (a transport we do not know): a plain timer,
			// which cannot tell a late read from a late reply.
			this.timerDeadline = this.resources.timer()
				.newTimeout((timeout) -> timedOut(send), this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
		if (isDone()) {
			// Completed as it was being sent: the completion may have read no deadline.
			cancelTimers();
		}
	}

	private void cancelTimers() {
		cancel(this.unsentGuard);
		cancel(this.deadline);
		cancel(this.timerDeadline);
	}

	private static void cancel(@Nullable Future<?> task) {
		if (task != null) {
			task.cancel(false);
		}
	}

	private static void cancel(@Nullable Timeout timeout) {
		if (timeout != null) {
			timeout.cancel();
		}
	}

	private void deadline(EventExecutor ioThread, int send) {
		if (!isDone() && send == this.sends) {
			// Scheduled from a task, this runs after the I/O thread's next read.
			ioThread.schedule(() -> timedOut(send), 0, TimeUnit.NANOSECONDS);
		}
	}

	private void timedOut(int send) {
		if (!isDone() && send == this.sends) {
			this.call.replyTimedOut(this);
		}
	}

	/**
	 * The outcome of one script call, told of late replies.
	 */
	abstract static class ScriptCall extends CompletableFuture<List<Object>> {

		/**
		 * Called with a reply, on the I/O thread.
		 * @param reply the script's reply
		 */
		abstract void reply(List<Object> reply);

		/**
		 * Called when a sent command's reply did not come within the timeout, on the I/O
		 * thread: fails the call as a timeout, whose late reply still tells what Redis
		 * did.
		 * @param command the command
		 */
		void replyTimedOut(ScriptCommand command) {
			completeExceptionally(new ScriptTimeoutException(ScriptTimeoutException.Wait.REPLY));
		}

		/**
		 * Called when a command failed (an error reply, a lost connection), on the thread
		 * that failed it.
		 * @param command the command
		 * @param failure why
		 */
		abstract void failed(ScriptCommand command, Throwable failure);

	}

}
