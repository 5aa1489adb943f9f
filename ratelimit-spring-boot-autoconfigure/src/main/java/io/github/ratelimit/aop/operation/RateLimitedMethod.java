package io.github.ratelimit.aop.operation;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;

import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.annotation.RepeatableContainers;
import org.springframework.expression.Expression;

import io.github.ratelimit.annotation.RateLimited;

/**
 * Everything the interceptor needs about one rate-limited method, parsed once: its
 * {@link RateLimited @RateLimited} operations in the order they are decided, and how it
 * returns its result.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitedMethod {

	private static final String SCHEDULED = "org.springframework.scheduling.annotation.Scheduled";

	private final Method method;

	private final List<RateLimitedOperation> operations;

	private final ReturnKind returnKind;

	private final boolean suspending;

	private final Set<String> parameterNames;

	private final String description;

	private final boolean actsAfterCall;

	private final boolean scheduledTask;

	private final boolean readsRequest;

	RateLimitedMethod(Method method, List<RateLimitedOperation> operations, Set<String> parameterNames,
			String description) {
		this.method = method;
		this.operations = List.copyOf(operations);
		this.returnKind = ReturnKind.of(method);
		this.suspending = KotlinDetector.isSuspendingFunction(method);
		this.parameterNames = Set.copyOf(parameterNames);
		this.description = description;
		this.actsAfterCall = operations.stream()
			.anyMatch((operation) -> operation.refundWhen() != null || operation.settle() != null);
		this.scheduledTask = method.getReturnType() == void.class && MergedAnnotations
			.from(method, SearchStrategy.TYPE_HIERARCHY, RepeatableContainers.standardRepeatables())
			.isPresent(SCHEDULED);
		this.readsRequest = operations.stream()
			.flatMap(
					(operation) -> Stream.of(operation.key(), operation.cost(), operation.limit(), operation.skipWhen(),
							operation.refundWhen(), operation.settle(), operation.settleOnError(), operation.zone()))
			.filter(Objects::nonNull)
			.map(Expression::getExpressionString)
			.anyMatch((text) -> reads(text, "request") || reads(text, "exchange") || reads(text, "clientIp"));
	}

	private boolean reads(String expression, String variable) {
		return expression.contains("#" + variable) && !this.parameterNames.contains(variable);
	}

	/**
	 * Returns the method for messages, e.g. {@code ReportJob.refresh()}.
	 * @return the description
	 */
	public String description() {
		return this.description;
	}

	/**
	 * Returns whether the method is a {@code @Scheduled} task returning {@code void}: a
	 * call rejected without a fallback method then skips the tick, logged at DEBUG,
	 * rather than throwing into the scheduler, which would log an ERROR with a stack
	 * trace on every rejected tick.
	 * @return {@code true} for a void {@code @Scheduled} method
	 */
	public boolean scheduledTask() {
		return this.scheduledTask;
	}

	/**
	 * Returns the method the annotations were found for (on the target class, not an
	 * interface).
	 * @return the method
	 */
	public Method method() {
		return this.method;
	}

	/**
	 * Returns the operations, in declaration order.
	 * @return the operations, at least one
	 */
	public List<RateLimitedOperation> operations() {
		return this.operations;
	}

	/**
	 * Returns how the method returns its result, which decides whether a call is limited
	 * by blocking or by composing on the returned stage or publisher.
	 * @return the return kind
	 */
	public ReturnKind returnKind() {
		return this.returnKind;
	}

	/**
	 * Returns whether the method is a Kotlin {@code suspend} function: its arguments end
	 * with a {@code Continuation}, which expressions never see.
	 * @return {@code true} for a {@code suspend} function
	 */
	public boolean suspending() {
		return this.suspending;
	}

	/**
	 * Returns the parameter names, so that an argument named like a built-in variable
	 * ({@code request}, {@code principal}) keeps its own value.
	 * @return the names
	 */
	public Set<String> parameterNames() {
		return this.parameterNames;
	}

	/**
	 * Returns whether any operation has a {@code refundWhen} or a {@code settle}.
	 * @return {@code true} when the outcome of the call must be examined
	 */
	public boolean actsAfterCall() {
		return this.actsAfterCall;
	}

	/**
	 * Returns whether an expression reads {@code #request}, {@code #exchange} or
	 * {@code #clientIp} from the web request (rather than from an argument of that name):
	 * on a reactive stack that request is found in the subscriber's context, not on the
	 * calling thread.
	 * @return {@code true} when some expression may read the request
	 */
	public boolean readsRequest() {
		return this.readsRequest;
	}

	@Override
	public String toString() {
		return this.description + " " + this.operations;
	}

}
