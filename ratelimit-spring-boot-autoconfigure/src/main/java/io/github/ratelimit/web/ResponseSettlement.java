package io.github.ratelimit.web;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.http.HttpStatusCode;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * A filter rule's or a route's {@code settle}: SpEL evaluated once the response is
 * complete, saying how many permits the request really used, e.g.
 * {@code #header('X-Tokens-Used')} (a response header the backend sets) or
 * {@code #status >= 500 ? 0 : #header('X-Tokens-Used')}. It sees the response's status as
 * {@code #status} and its headers through the function {@code #header(name)} (the first
 * value, or {@code null}), and beans as {@code @name}. Parsed at startup, so that a
 * syntax error fails it naming the property.
 * <p>
 * A value that is no whole number (a header the backend did not set) keeps the
 * reservation at its estimate, and a negative one settles 0; either is logged once per
 * property, as the response has been served and must not fail for it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ResponseSettlement {

	private static final Log logger = LogFactory.getLog(ResponseSettlement.class);

	private static final MethodHandle HEADER;

	static {
		try {
			HEADER = MethodHandles.lookup()
				.findVirtual(Function.class, "apply", MethodType.methodType(Object.class, Object.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final Expression expression;

	private final String where;

	private final RateLimitExpressions expressions;

	private final Set<String> warned = ConcurrentHashMap.newKeySet();

	private ResponseSettlement(Expression expression, String where, RateLimitExpressions expressions) {
		this.expression = expression;
		this.where = where;
		this.expressions = expressions;
	}

	/**
	 * Parses a {@code settle} property.
	 * @param text the SpEL, or blank for none
	 * @param where the property, for messages, e.g.
	 * {@code ratelimit.filter.rules[0].settle}
	 * @param expressions parses and evaluates SpEL
	 * @return the settlement, or {@code null} for a blank text
	 * @throws io.github.ratelimit.expression.RateLimitExpressions.InvalidExpressionException
	 * naming the property when the SpEL does not parse
	 */
	public static @Nullable ResponseSettlement parse(@Nullable String text, String where,
			RateLimitExpressions expressions) {
		if (text == null || text.isBlank()) {
			return null;
		}
		return new ResponseSettlement(expressions.parse(text, where), where, expressions);
	}

	/**
	 * Returns the status a reactive response ended with, for {@code #status}: a failure
	 * before anything was sent is answered with 500, and a response that set none with
	 * 200.
	 * @param code the response's status code, or {@code null} when it set none
	 * @param failed whether the exchange ended with an error
	 * @param committed whether the response was sent (its status then stands)
	 * @return the status
	 */
	public static int status(@Nullable HttpStatusCode code, boolean failed, boolean committed) {
		if (failed && (code == null || !committed)) {
			return 500;
		}
		return (code != null) ? code.value() : 200;
	}

	/**
	 * Returns the SpEL, as configured.
	 * @return the expression text
	 */
	public String text() {
		return this.expression.getExpressionString();
	}

	/**
	 * Evaluates what a request used from its response.
	 * @param status the response's status code
	 * @param headers the response's headers: a name's first value, or {@code null}
	 * @return the permits used, or {@code null} to keep the reservation's estimate
	 */
	public @Nullable Long used(int status, Function<String, @Nullable String> headers) {
		EvaluationContext context = this.expressions.context(null);
		context.setVariable("status", status);
		context.setVariable("header", HEADER.bindTo(headers));
		Object value;
		try {
			value = this.expressions.evaluate(this.expression, context, this.where);
		}
		catch (RuntimeException ex) {
			warnOnce(ex.getMessage() + "; such requests keep their estimate");
			return null;
		}
		Long used = RateLimitExpressions.wholeNumber(value);
		if (used == null) {
			warnOnce("'" + text() + "' must evaluate to a whole number but was " + RateLimitExpressions.describe(value)
					+ " (status " + status + "); such requests keep their estimate");
			return null;
		}
		if (used < 0) {
			warnOnce("'" + text() + "' must not be negative but was " + used + "; such requests settle 0");
			return 0L;
		}
		return used;
	}

	/**
	 * Settles a reservation with what its response says was used; keeps the estimate when
	 * the response does not say. A settlement the store cannot make is logged: the
	 * response has been served.
	 * @param reserved the reservation's result, allowed
	 * @param status the response's status code
	 * @param headers the response's headers: a name's first value, or {@code null}
	 * @param acquirer settles through the store
	 */
	public void settle(RateLimitResult reserved, int status, Function<String, @Nullable String> headers,
			Acquirer acquirer) {
		Long used = used(status, headers);
		if (used == null) {
			return;
		}
		try {
			acquirer.settle(reserved, used);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not settle " + used + " permit(s) of bucket '" + reserved.bucket().name()
					+ "' (reserved " + reserved.request().cost() + "); the reservation stays charged at its estimate",
					ex);
		}
	}

	private void warnOnce(String problem) {
		if (this.warned.add(problem.replaceAll("-?\\d+", "#"))) {
			logger.warn(this.where + ": " + problem + " (logged once)");
		}
	}

}
