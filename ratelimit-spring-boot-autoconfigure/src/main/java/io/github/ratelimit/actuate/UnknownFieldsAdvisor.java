package io.github.ratelimit.actuate;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameter;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * Refuses the fields of a request to a write operation of {@link RateLimitsEndpoint}
 * ({@code POST /actuator/ratelimits/{bucket}}) that the operation does not take. Actuator
 * hands an operation only the body fields and query parameters named like its parameters
 * and drops the others without a word, so {@code {"limit": 3, "widnow": "1m"}} would
 * change the limit and keep the window: this answers 400 naming each unknown field and
 * the fields there are, and the operation does not run. Spring Boot applies every
 * {@link OperationInvokerAdvisor} bean to the operations it discovers, on Spring MVC and
 * WebFlux alike; other endpoints and operations are left as they are.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class UnknownFieldsAdvisor implements OperationInvokerAdvisor {

	private static final EndpointId ENDPOINT = EndpointId.of(RateLimitsEndpoint.ID);

	@Override
	public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
			OperationInvoker invoker) {
		if (!endpointId.equals(ENDPOINT) || operationType != OperationType.WRITE) {
			return invoker;
		}
		return (context) -> {
			List<String> fields = fields(parameters, context);
			List<String> selectors = selectors(parameters);
			List<String> unknown = new ArrayList<>();
			for (String name : context.getArguments().keySet()) {
				if (!fields.contains(name) && !selectors.contains(name)) {
					unknown.add(name);
				}
			}
			if (!unknown.isEmpty()) {
				String bucket = selectors.isEmpty() ? "<bucket>"
						: String.valueOf(context.getArguments().get(selectors.get(0)));
				return refusal(bucket, unknown, fields);
			}
			return invoker.invoke(context);
		};
	}

	/**
	 * Returns the parameters a request sets by name: neither a path selector nor one that
	 * the invocation supplies (such as who asks).
	 */
	private static List<String> fields(OperationParameters parameters, InvocationContext context) {
		return parameters.stream()
			.filter((parameter) -> parameter.getAnnotation(Selector.class) == null
					&& !context.canResolve(parameter.getType()))
			.map(OperationParameter::getName)
			.toList();
	}

	private static List<String> selectors(OperationParameters parameters) {
		return parameters.stream()
			.filter((parameter) -> parameter.getAnnotation(Selector.class) != null)
			.map(OperationParameter::getName)
			.toList();
	}

	private static WebEndpointResponse<Object> refusal(String bucket, List<String> unknown, List<String> fields) {
		String prefix = "ratelimit.buckets." + bucket + ".";
		String message = String.join(", ", unknown.stream().map((name) -> prefix + name).toList())
				+ ((unknown.size() == 1) ? ": not a limit setting" : ": not limit settings") + "; use " + oneOf(fields);
		return RateLimitsEndpointWebExtension.refusal(WebEndpointResponse.STATUS_BAD_REQUEST, message);
	}

	private static String oneOf(List<String> names) {
		if (names.size() < 2) {
			return String.join("", names);
		}
		return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
	}

}
