package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.PropertyAccessor;

import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.CachingPropertyAccessor;

/**
 * The SpEL context of one call: the arguments by name (and as {@code #p0}/{@code #a0}),
 * {@code #args}, {@code #method}, {@code #target}, {@code #request}, {@code #clientIp}
 * (the client's address of the caller's request, as the filter rules see it),
 * {@code #principal}, beans as {@code @name}, and after the call {@code #result} and
 * {@code #exception}. {@code #request}, {@code #clientIp} and {@code #principal} are
 * looked up only when an expression uses them, so calls whose expressions do not pay
 * nothing for them.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RateLimitedEvaluationContext extends MethodBasedEvaluationContext {

	static final String REQUEST = "request";

	static final String PRINCIPAL = "principal";

	static final String EXCHANGE = "exchange";

	static final String CLIENT_IP = "clientIp";

	/**
	 * Shared so its per-class caches survive: a fresh accessor per call reflects every
	 * time.
	 */
	private static final List<PropertyAccessor> PROPERTY_ACCESSORS = List.of(new CachingPropertyAccessor());

	private final Set<String> parameterNames;

	private final ClientIpResolver clientIps;

	/** The caller's web request, whatever an argument named {@code request} holds. */
	private @Nullable Object callerRequest;

	private boolean callerRequestResolved;

	private boolean requestResolved;

	private boolean clientIpResolved;

	private boolean principalResolved;

	RateLimitedEvaluationContext(RateLimitedMethod rateLimitedMethod, @Nullable Object[] arguments,
			@Nullable Object target, @Nullable BeanResolver beanResolver, ParameterNameDiscoverer discoverer,
			ClientIpResolver clientIps) {
		super(null, rateLimitedMethod.method(), arguments, discoverer);
		setPropertyAccessors(PROPERTY_ACCESSORS);
		this.parameterNames = rateLimitedMethod.parameterNames();
		this.clientIps = clientIps;
		Method method = rateLimitedMethod.method();
		// A suspend function's arguments end with the caller's Continuation, which no
		// expression sees (the superclass leaves it out of #p0, #a0 and the names too).
		setVariable("args", (rateLimitedMethod.suspending() && arguments != null && arguments.length > 0)
				? Arrays.copyOf(arguments, arguments.length - 1) : arguments);
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
			value = callerRequest();
			setVariable(REQUEST, value);
		}
		else if (CLIENT_IP.equals(name) && !this.clientIpResolved) {
			this.clientIpResolved = true;
			value = CallerContext.clientIp(this.clientIps, callerRequest());
			setVariable(CLIENT_IP, value);
		}
		else if (PRINCIPAL.equals(name) && !this.principalResolved) {
			this.principalResolved = true;
			value = CallerContext.currentPrincipal();
			setVariable(PRINCIPAL, value);
		}
		return value;
	}

	/**
	 * Resolves {@code #request} (also for {@code #clientIp}) and {@code #principal} now,
	 * on the calling thread, for expressions evaluated later on another thread
	 * ({@code refundWhen} of an asynchronous method), where the thread-bound values are
	 * gone.
	 */
	void captureCaller() {
		callerRequest();
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
		this.callerRequest = request;
		this.callerRequestResolved = true;
		if (!this.parameterNames.contains(EXCHANGE)) {
			setVariable(EXCHANGE, exchange);
		}
		if (!this.parameterNames.contains(REQUEST)) {
			this.requestResolved = true;
			setVariable(REQUEST, request);
		}
	}

	private @Nullable Object callerRequest() {
		if (!this.callerRequestResolved) {
			this.callerRequestResolved = true;
			this.callerRequest = CallerContext.currentRequest();
		}
		return this.callerRequest;
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
