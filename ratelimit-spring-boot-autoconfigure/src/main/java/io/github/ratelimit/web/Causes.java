package io.github.ratelimit.web;

import org.jspecify.annotations.Nullable;

/**
 * Finds a rate limiting exception among the causes of what a handler threw: a rejection
 * may arrive wrapped (a {@code CompletionException}, a framework's own exception).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Causes {

	/** Causes followed at most, so that a cycle cannot loop. */
	private static final int MAX_DEPTH = 8;

	private Causes() {
	}

	/**
	 * Returns the first exception of a type among {@code ex} and its causes.
	 * @param <T> the type
	 * @param ex the exception thrown
	 * @param type the type looked for
	 * @return the exception, or {@code null} when none is of the type
	 */
	public static <T extends Throwable> @Nullable T find(Throwable ex, Class<T> type) {
		Throwable current = ex;
		for (int depth = 0; current != null && depth < MAX_DEPTH; depth++) {
			if (type.isInstance(current)) {
				return type.cast(current);
			}
			current = current.getCause();
		}
		return null;
	}

}
