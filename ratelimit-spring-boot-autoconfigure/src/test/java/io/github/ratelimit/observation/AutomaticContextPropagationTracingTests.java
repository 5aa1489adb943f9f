package io.github.ratelimit.observation;

import org.junit.jupiter.api.AfterAll;
import reactor.core.publisher.Hooks;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * {@link WebFluxDecisionTracingTests} with Reactor's automatic context propagation
 * ({@code spring.reactor.context-propagation=auto}): it turns on a JVM-wide Reactor hook,
 * so the context is closed after the class and the hook turned off, and later test
 * classes in the same JVM run without it, as they were written to.
 */
@TestPropertySource(properties = "spring.reactor.context-propagation=auto")
@DirtiesContext
class AutomaticContextPropagationTracingTests extends WebFluxDecisionTracingTests {

	@AfterAll
	static void turnOffAutomaticContextPropagation() {
		Hooks.disableAutomaticContextPropagation();
	}

}
