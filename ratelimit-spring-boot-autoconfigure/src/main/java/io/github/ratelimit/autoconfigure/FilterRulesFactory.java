package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.autoconfigure.RateLimitProperties.Rule;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
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
	 * @param concurrencyLimiters where each rule's concurrency limit is made
	 * @param expressions parses the key and cost expressions
	 * @param variables what the expressions see of a request on the stack
	 * @return the rules
	 * @throws InvalidFilterRuleException naming the rule when one cannot be built
	 */
	static FilterRules create(RateLimitProperties properties, BucketRegistry registry,
			ConcurrencyLimiters concurrencyLimiters, RateLimitExpressions expressions, RequestVariables variables) {
		List<FilterRule> rules = new ArrayList<>();
		List<Rule> configured = properties.getFilter().getRules();
		for (int i = 0; i < configured.size(); i++) {
			Rule rule = configured.get(i);
			String name = "ratelimit.filter.rules[" + i + "]";
			String bucketName = (rule.getBucket() != null && !rule.getBucket().isBlank()) ? rule.getBucket()
					: "filter-" + i;
			ConcurrencyLimiter concurrency = concurrency(name, bucketName, rule, concurrencyLimiters);
			LimitSettings limit = RateLimitSettingsMapper.limit(rule);
			// A rule that limits requests in flight has a rate limit only when something
			// sets one: its own fields or ratelimit.buckets, not the defaults alone.
			boolean limitsRate = concurrency == null || !limit.equals(LimitSettings.NONE)
					|| registry.find(bucketName) != null;
			try {
				FilterRule.Builder builder;
				if (limitsRate) {
					BucketDefinition bucket = registry.register(bucketName, limit, BucketSource.FILTER, name);
					builder = FilterRule.builder(name, bucket::bucket);
				}
				else if (!rule.getSettle().isBlank()) {
					throw new InvalidFilterRuleException(name + ".settle",
							name + ".settle is set, but the rule has no rate limit to settle: it only limits requests"
									+ " in flight",
							"Give " + name + " a limit and a window (or define ratelimit.buckets." + bucketName
									+ "), or remove " + name + ".settle.");
				}
				else {
					builder = FilterRule.builder(name);
				}
				rules.add(builder.concurrency(concurrency)
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
				// and the fix.
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

	/**
	 * Returns the rule's concurrency limit, keyed like its rate limit (by its bucket), or
	 * {@code null} when it sets none. An out-of-range value is reported by the limiters,
	 * naming the rule's property when the rule set it.
	 */
	private static @Nullable ConcurrencyLimiter concurrency(String name, String bucket, Rule rule,
			ConcurrencyLimiters limiters) {
		Integer permits = rule.getConcurrency();
		if (permits == null) {
			if (rule.getConcurrencyLease() != null) {
				throw new InvalidFilterRuleException(name + ".concurrency-lease",
						name + ".concurrency-lease is set, but " + name + ".concurrency is not",
						"Set " + name + ".concurrency to the requests of a key that may be in flight at once, e.g. "
								+ name + ".concurrency=10, or remove " + name + ".concurrency-lease.");
			}
			return null;
		}
		return limiters.get(bucket, new ConcurrencyLimiters.Settings(permits, rule.getConcurrencyLease()),
				new ConcurrencyLimiters.Origin(name, name + ".concurrency", name + ".concurrency-lease"));
	}

}
