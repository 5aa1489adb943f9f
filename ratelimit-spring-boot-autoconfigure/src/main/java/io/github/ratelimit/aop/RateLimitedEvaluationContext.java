package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.PropertyAccessor;

import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.expression.CachingPropertyAccessor;

/**
 * The SpEL context of one call: the arguments by name (and as {@code #p0}/{@code #a0}),
 * {@code #args}, {@code #method}, {@code #target}, {@code #request}, {@code #principal},
 * beans as {@code @name}, and after the call {@code #result} and {@code #exception}.
 * {@code #request} and {@code #principal} are looked up only when an expression uses
 * them, so calls whose expressions do not pay nothing for them.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RateLimitedEvaluationContext extends MethodBasedEvaluationContext {

	static final String REQUEST = "request";

	static final String PRINCIPAL = "principal";

	static final String EXCHANGE = "exchange";

	/**
	 * Shared so its per-class caches survive: a fresh accessor per call reflects every
	 * time.
	 */
	private static final List<PropertyAccessor> PROPERTY_ACCESSORS = List.of(new CachingPropertyAccessor());

	private final Set<String> parameterNames;

	private boolean requestResolved;

	private boolean principalResolved;

	RateLimitedEvaluationContext(RateLimitedMethod rateLimitedMethod, @Nullable Object[] arguments,
			@Nullable Object target, @Nullable BeanResolver beanResolver, ParameterNameDiscoverer discoverer) {
		super(null, rateLimitedMethod.method(), arguments, discoverer);
		setPropertyAccessors(PROPERTY_ACCESSORS);
		this.parameterNames = rateLimitedMethod.parameterNames();
		Method method = rateLimitedMethod.method();
		setVariable("args", arguments);
		setVariable("method", method);
		setVariable("target", target);
		if (beanResolver != null) {
			setBeanResolver(beanResolver);
		}
	}

	@Override
	public @Nullable Object lookupVariable(String name) {
		Object value = super.lookupVariable(name);
		if (value != null || this.parameterNames.contains(name)) {
			return value;
		}
		if (REQUEST.equals(name) && !this.requestResolved) {
			this.requestResolved = true;
			value = CallerContext.currentRequest();
			setVariable(REQUEST, value);
		}
		else if (PRINCIPAL.equals(name) && !this.principalResolved) {
			this.principalResolved = true;
			value = CallerContext.currentPrincipal();
			setVariable(PRINCIPAL, value);
		}
		return value;
	}

	/**
	 * Resolves {@code #request} and {@code #principal} now, on the calling thread, for
	 * expressions evaluated later on another thread ({@code refundWhen} of an
	 * asynchronous method), where the thread-bound values are gone.
	 */
	void captureCaller() {
		lookupVariable(REQUEST);
		lookupVariable(PRINCIPAL);
	}

	/**
	 * Sets the request of a reactive call, found in its subscriber's context: the
	 * {@code ServerWebExchange} as {@code #exchange} and its request as {@code #request}
	 * (arguments of those names keep their own values).
	 * @param exchange the exchange
	 * @param request its request
	 */
	void setExchange(Object exchange, Object request) {
		if (!this.parameterNames.contains(EXCHANGE)) {
			setVariable(EXCHANGE, exchange);
		}
		if (!this.parameterNames.contains(REQUEST)) {
			this.requestResolved = true;
			setVariable(REQUEST, request);
		}
	}

	/**
	 * Sets {@code #result} and {@code #exception} for {@code refundWhen}.
	 * @param result what the method returned (for a stage or publisher, the value it
	 * completed with)
	 * @param exception what the method threw, or {@code null}
	 */
	void setOutcome(@Nullable Object result, @Nullable Throwable exception) {
		setVariable("result", result);
		setVariable("exception", exception);
	}

}
