package io.github.ratelimit.testsupport.threads;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Prints where every thread of the JVM stood when a test failed, then lets the failure
 * through: a request that hangs (a timeout on a client's blocking read) leaves no other
 * trace of which thread failed to answer it.
 */
public class ThreadDumpOnFailure implements TestExecutionExceptionHandler {

	@Override
	public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
		System.out.println(threads(context.getDisplayName() + " failed (" + throwable + "). Threads:"));
		throw throwable;
	}

	/**
	 * Returns every live thread's name, state, lock and whole stack.
	 * @param heading the first line
	 * @return the dump
	 */
	public static String threads(String heading) {
		StringBuilder text = new StringBuilder(heading);
		for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
			// ThreadInfo's own text stops after eight frames.
			text.append(String.format("%n\"%s\" %s", thread.getThreadName(), thread.getThreadState()));
			if (thread.getLockName() != null) {
				text.append(" on ").append(thread.getLockName());
				if (thread.getLockOwnerName() != null) {
					text.append(" held by \"").append(thread.getLockOwnerName()).append('"');
				}
			}
			for (StackTraceElement frame : thread.getStackTrace()) {
				text.append(String.format("%n\tat %s", frame));
			}
		}
		return text.toString();
	}

}
