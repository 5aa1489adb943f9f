package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.autoconfigure.RateLimitProperties.Rule;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.InvalidFilterRuleException;
import io.github.ratelimit.web.RequestVariables;

/**
 * Builds the {@code ratelimit.filter.rules} for one request stack, registering each
 * rule's bucket: the servlet filter and the reactive web filter read the same rules
 * through here.
 */
final class FilterRulesFactory {

	private FilterRulesFactory() {
	}

	/**
	 * Builds the rules.
	 * @param properties the configuration
	 * @param registry where each rule's bucket is registered
	 * @param expressions parses the key and cost expressions
	 * @param variables what the expressions see of a request on the stack
	 * @return the rules
	 * @throws InvalidFilterRuleException naming the rule when one cannot be built
	 */
	static FilterRules create(RateLimitProperties properties, BucketRegistry registry, RateLimitExpressions expressions,
			RequestVariables variables) {
		List<FilterRule> rules = new ArrayList<>();
		List<Rule> configured = properties.getFilter().getRules();
		for (int i = 0; i < configured.size(); i++) {
			Rule rule = configured.get(i);
			String name = "ratelimit.filter.rules[" + i + "]";
			String bucketName = (rule.getBucket() != null && !rule.getBucket().isBlank()) ? rule.getBucket()
					: "filter-" + i;
			BucketDefinition bucket = registry.register(bucketName, RateLimitSettingsMapper.limit(rule),
					BucketSource.FILTER, name);
			try {
				rules.add(FilterRule.builder(name, bucket::bucket)
					.paths(rule.getPaths())
					.methods(rule.getMethods())
					.key(rule.getKey())
					.cost(rule.getCost())
					.settle(rule.getSettle())
					.nullKeyPolicy(properties.getNullKey())
					.build(expressions, variables));
			}
			catch (InvalidRateLimitConfigurationException ex) {
				// Already names what is at fault (the rule's property, its expression)
				// and
				// the fix.
				throw ex;
			}
			catch (IllegalArgumentException | IllegalStateException ex) {
				throw new InvalidFilterRuleException(name, String.valueOf(ex.getMessage()),
						"Correct " + name + " (docs/usage.md, 'Filter rules', and docs/web.md list what rules "
								+ "can read on each web stack), or remove the rule.",
						ex);
			}
		}
		return new FilterRules(rules, properties.getFilter().getMatch());
	}

}
