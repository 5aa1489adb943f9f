package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.expression.RateLimitExpressions.InvalidExpressionException;

/**
 * Reports SpEL that does not parse, in a filter rule ({@code key}, {@code cost}) or a
 * {@code @RateLimited} attribute ({@code key}, {@code cost}, {@code limitExpression},
 * {@code skipWhen}, {@code refundWhen}), naming where it is written.
 */
class InvalidExpressionFailureAnalyzer extends ConfigurationFailureAnalyzer<InvalidExpressionException> {

	@Override
	String action(InvalidExpressionException cause) {
		if (cause.getWhere().startsWith("ratelimit.")) {
			return "Correct " + cause.getWhere() + ": SpEL that sees the request as #request (e.g. "
					+ "#request.getHeader('X-Api-Key')), the client's address as #clientIp and beans as @name.";
		}
		return "Correct the expression of " + cause.getWhere() + ": SpEL that sees the method's arguments by name "
				+ "(e.g. #username), #args, #request, #clientIp, #principal and beans as @name.";
	}

}
