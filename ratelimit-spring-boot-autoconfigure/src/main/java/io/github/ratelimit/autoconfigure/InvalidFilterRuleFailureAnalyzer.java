package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.web.InvalidFilterRuleException;

/**
 * Reports a {@code ratelimit.filter.rules[i]} entry that cannot work (path pattern, HTTP
 * method, cost, or a key or cost that reads what the request does not offer).
 */
class InvalidFilterRuleFailureAnalyzer extends ConfigurationFailureAnalyzer<InvalidFilterRuleException> {

	@Override
	String action(InvalidFilterRuleException cause) {
		return cause.getAction();
	}

}
