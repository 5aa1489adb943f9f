package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@code ratelimit.filter.rules} entry that cannot be built as a description
 * naming the rule, the value and the fix, instead of a stack of bean creation failures.
 */
class InvalidFilterRuleFailureAnalyzer extends AbstractFailureAnalyzer<InvalidFilterRuleException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidFilterRuleException cause) {
		return new FailureAnalysis(cause.getMessage(),
				"Correct " + cause.getProperty() + " (the README's 'Filter rules' and 'Which stack' sections list what "
						+ "rules can read on each web stack), or remove the rule.",
				cause);
	}

}
