package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Reports one family of the starter's configuration errors as Spring Boot's "APPLICATION
 * FAILED TO START" block: the exception's message (which names the property or the
 * method) as the Description, and how to fix it as the Action. The exception is found
 * anywhere in the cause chain, so it is reported however deep the bean creation that
 * raised it was (under "Unable to start embedded Tomcat", say).
 *
 * @param <T> the exception family
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
abstract class ConfigurationFailureAnalyzer<T extends Throwable> extends AbstractFailureAnalyzer<T> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, T cause) {
		return new FailureAnalysis(description(cause), action(cause), cause);
	}

	/**
	 * Returns what went wrong; the exception's message unless overridden.
	 * @param cause the error
	 * @return the description
	 */
	String description(T cause) {
		return String.valueOf(cause.getMessage());
	}

	/**
	 * Returns how to fix the error.
	 * @param cause the error
	 * @return the action
	 */
	abstract String action(T cause);

}
