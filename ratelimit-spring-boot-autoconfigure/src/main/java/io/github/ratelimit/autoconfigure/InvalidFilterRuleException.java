package io.github.ratelimit.autoconfigure;

/**
 * A {@code ratelimit.filter.rules} entry that cannot be built: a bad path pattern,
 * method, key or cost. Carries the property at fault, so that
 * {@link InvalidFilterRuleFailureAnalyzer} reports it as Spring Boot reports a bad
 * property.
 */
class InvalidFilterRuleException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String property;

	InvalidFilterRuleException(String property, RuntimeException cause) {
		super(cause.getMessage(), cause);
		this.property = property;
	}

	/**
	 * Returns the rule at fault, e.g. {@code ratelimit.filter.rules[0]}.
	 * @return the property
	 */
	String getProperty() {
		return this.property;
	}

}
