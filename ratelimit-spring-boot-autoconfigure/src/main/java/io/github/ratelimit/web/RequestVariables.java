package io.github.ratelimit.web;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;

/**
 * What the expressions of a filter rule see of a request on one request stack. A filter
 * hands the rules the object it has for a request (an {@code HttpServletRequest} for the
 * servlet filter, a {@code ServerWebExchange} for the reactive one); this says which
 * object {@code #request} is, of which type, and which other variables the stack offers
 * (the reactive stack adds {@code #exchange}).
 * <p>
 * Every stack also offers {@code #clientIp}: the address of the client as text, e.g.
 * {@code 10.0.0.7}, so that a rule keyed by client address reads the same on every stack,
 * and behind proxies is the client's address as far as the trusted proxies tell it (see
 * {@link io.github.ratelimit.clientip.ClientIpResolver}); unlike
 * {@code #request.remoteAddr}, which a forwarded-header filter may have taken from a
 * header any client can send.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RequestVariables {

	/** The variable every stack offers for the client's address. */
	String CLIENT_IP = "clientIp";

	/**
	 * Returns the type of {@code #request}, whose getters expressions read directly.
	 * @return the type
	 */
	Class<?> requestType();

	/**
	 * Returns {@code #request} for what the filter has of a request.
	 * @param exchange the filter's object for the request
	 * @return the request
	 */
	Object request(Object exchange);

	/**
	 * Returns the client's address as text, for {@code #clientIp}.
	 * @param exchange the filter's object for the request
	 * @return the address, or {@code null} when the stack does not know it
	 */
	@Nullable String clientIp(Object exchange);

	/**
	 * Sets the variables of a request in an evaluation context: {@code #request} and
	 * whatever else the stack offers, but not {@code #clientIp}, which is worked out only
	 * for expressions that read it.
	 * @param exchange the filter's object for the request
	 * @param context the context
	 */
	default void bind(Object exchange, EvaluationContext context) {
		context.setVariable("request", request(exchange));
	}

	/**
	 * Returns what to read instead of a property that the request type does not have and
	 * that is known to be a mistake on this stack, e.g. the reactive stack's way to the
	 * client address for {@code #request.remoteAddr}, copied from a servlet example.
	 * @param property the property read
	 * @return the hint, or {@code ""} when the property is not a known mistake
	 */
	default String hint(String property) {
		return "";
	}

	/**
	 * Returns the variables of a stack whose filter object is the request itself, and
	 * which offers nothing else ({@code #clientIp} is {@code null}).
	 * @param requestType the type of the request
	 * @return the variables
	 */
	static RequestVariables of(Class<?> requestType) {
		Objects.requireNonNull(requestType, "'requestType' must not be null");
		return new PlainRequestVariables(requestType);
	}

}
