package io.github.ratelimit.observation;

/**
 * {@link WebFluxDecisionTracingTests} with Spring Boot's default Reactor context
 * propagation ({@code spring.reactor.context-propagation=limited}), where thread locals
 * are restored from the subscriber's context in {@code handle} and {@code tap} only: the
 * filter and the interceptor take their permits in a {@code handle}, so the decision
 * still has the request's span as its parent.
 */
class LimitedContextPropagationTracingTests extends WebFluxDecisionTracingTests {

}
