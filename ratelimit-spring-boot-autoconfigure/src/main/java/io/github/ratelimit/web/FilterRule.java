package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * One parsed {@code ratelimit.filter.rules[i]} entry: which requests it applies to (path
 * patterns and HTTP methods), which bucket limits them, and the SpEL for the key and the
 * cost. Everything is parsed and validated when the rule is built, so a bad rule fails
 * startup with a message naming the property; per request only matching and evaluation
 * remain.
 * <p>
 * Expressions see the request as {@code #request}, the client's address as
 * {@code #clientIp} and beans as {@code @name}; what else, and of which type
 * {@code #request} is, depends on the request stack ({@link RequestVariables}: an
 * {@code HttpServletRequest} for the servlet filter, a {@code ServerHttpRequest} and
 * {@code #exchange} for the reactive one). A rule with {@code GET} also matches
 * {@code HEAD}, as Spring serves {@code HEAD} with the {@code GET} handler: otherwise
 * {@code HEAD} would be a way around the limit.
 * <p>
 * A rule may also limit how many requests of a key are in flight at once
 * ({@link #concurrency()}), alone or beside its rate limit.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class FilterRule {

	private static final Log logger = LogFactory.getLog(FilterRule.class);

	private static final List<String> KNOWN_METHODS = Arrays.stream(HttpMethod.values()).map(HttpMethod::name).toList();

	private final String name;

	private final @Nullable Supplier<Bucket> bucket;

	private final @Nullable ConcurrencyLimiter concurrency;

	private final List<PathPattern> paths;

	private final Set<String> methods;

	/** The methods as configured, in order, without the implied {@code HEAD}. */
	private final List<String> configuredMethods;

	private final @Nullable RequestExpression key;

	private final @Nullable RequestExpression cost;

	private final long constantCost;

	private final @Nullable ResponseSettlement settle;

	private final NullKeyPolicy nullKeyPolicy;

	private final AtomicBoolean nullKeyReported = new AtomicBoolean();

	private FilterRule(Builder builder, RateLimitExpressions expressions, RequestVariables variables) {
		this.name = builder.name;
		this.bucket = builder.bucket;
		this.concurrency = builder.concurrency;
		if (this.bucket == null && this.concurrency == null) {
			throw new IllegalArgumentException(
					builder.name + " limits nothing: give it a bucket or a concurrency limit");
		}
		this.nullKeyPolicy = builder.nullKeyPolicy;
		this.paths = parsePaths(builder.name, builder.paths);
		this.methods = parseMethods(builder.name, builder.methods);
		this.configuredMethods = builder.methods.stream()
			.map((method) -> method.trim().toUpperCase(Locale.ROOT))
			.distinct()
			.toList();
		this.key = builder.key.isBlank() ? null
				: RequestExpression.parse(builder.key, builder.name + ".key", expressions, variables);
		Long literalCost = parseLong(builder.cost.trim());
		if (literalCost != null) {
			this.cost = null;
			try {
				this.constantCost = RateLimitExpressions.cost(builder.cost.trim());
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidFilterRuleException(builder.name + ".cost",
						builder.name + ".cost '" + builder.cost + "' " + ex.getMessage(),
						"Set " + builder.name + ".cost to a whole number of at least 1 (the default is 1), or to "
								+ "SpEL that gives one.");
			}
		}
		else {
			this.cost = RequestExpression.parse(builder.cost, builder.name + ".cost", expressions, variables);
			this.constantCost = 0;
		}
		this.settle = ResponseSettlement.parse(builder.settle, builder.name + ".settle", expressions);
	}

	/**
	 * Starts a builder.
	 * @param name where the rule is configured, for messages, e.g.
	 * {@code ratelimit.filter.rules[0]}
	 * @param bucket the bucket that limits matching requests
	 * @return a new builder
	 */
	public static Builder builder(String name, Bucket bucket) {
		Objects.requireNonNull(bucket, "'bucket' must not be null");
		return new Builder(name, () -> bucket);
	}

	/**
	 * Starts a builder for a rule whose bucket is read on every request, so that limits
	 * changed at runtime apply from the next request on.
	 * @param name where the rule is configured, for messages
	 * @param bucket supplies the bucket as it is now; never {@code null}
	 * @return a new builder
	 */
	public static Builder builder(String name, Supplier<Bucket> bucket) {
		return new Builder(name, Objects.requireNonNull(bucket, "'bucket' must not be null"));
	}

	/**
	 * Starts a builder for a rule that only limits the requests in flight: it must be
	 * given a {@link Builder#concurrency concurrency limit}.
	 * @param name where the rule is configured, for messages
	 * @return a new builder
	 */
	public static Builder builder(String name) {
		return new Builder(name, null);
	}

	/**
	 * Returns where the rule is configured, e.g. {@code ratelimit.filter.rules[0]}.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the bucket that limits the rate of matching requests.
	 * @return the bucket, or {@code null} for a rule that only limits the requests in
	 * flight
	 */
	public @Nullable Bucket bucket() {
		return (this.bucket != null) ? this.bucket.get() : null;
	}

	/**
	 * Returns the limit on the requests of a key in flight at once.
	 * @return the limiter, or {@code null} when the rule does not limit concurrency
	 */
	public @Nullable ConcurrencyLimiter concurrency() {
		return this.concurrency;
	}

	/**
	 * Returns the path patterns, as configured.
	 * @return the patterns; empty when the rule matches every path
	 */
	public List<String> paths() {
		return this.paths.stream().map(PathPattern::getPatternString).toList();
	}

	/**
	 * Returns the HTTP methods, as configured ({@code HEAD} is matched with {@code GET}
	 * without being listed).
	 * @return the methods, upper case; empty when the rule matches every method
	 */
	public List<String> methods() {
		return this.configuredMethods;
	}

	/**
	 * Returns what a request of this rule really used, read from its response, when the
	 * rule settles: its cost is then a reservation.
	 * @return the settlement, or {@code null} when the cost is fixed up front
	 */
	public @Nullable ResponseSettlement settlement() {
		return this.settle;
	}

	/**
	 * Returns what happens when the key expression evaluates to {@code null}.
	 * @return the policy
	 */
	public NullKeyPolicy nullKeyPolicy() {
		return this.nullKeyPolicy;
	}

	/**
	 * Returns whether the rule looks at the path at all, so the filter parses the path
	 * only when some rule needs it.
	 * @return {@code true} when path patterns are set
	 */
	public boolean hasPaths() {
		return !this.paths.isEmpty();
	}

	/**
	 * Returns whether the rule applies to a request.
	 * @param method the HTTP method, e.g. {@code GET}
	 * @param path the path within the application (without the context path), or
	 * {@code null} when {@link #hasPaths()} is {@code false}
	 * @return {@code true} when the method and the path match
	 */
	public boolean matches(String method, @Nullable PathContainer path) {
		if (!this.methods.isEmpty() && !this.methods.contains(method.toUpperCase(Locale.ROOT))) {
			return false;
		}
		if (this.paths.isEmpty()) {
			return true;
		}
		if (path == null) {
			return false;
		}
		for (PathPattern pattern : this.paths) {
			if (pattern.matches(path)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Evaluates the key for a request.
	 * @param request what the filter has of the request (see {@link RequestVariables})
	 * @return the key, {@code ""} for a rule without a key expression (one limit shared
	 * by every client), or {@code null} when the expression evaluates to {@code null}
	 */
	public @Nullable String key(Object request) {
		if (this.key == null) {
			return "";
		}
		Object value = this.key.value(request);
		return (value != null) ? value.toString() : null;
	}

	/**
	 * Returns whether the key is read by calling a method of the request, without SpEL.
	 * @return {@code true} when it is
	 */
	boolean readsKeyDirectly() {
		return this.key != null && this.key.readsDirectly();
	}

	/**
	 * Evaluates the permits a request takes.
	 * @param request what the filter has of the request (see {@link RequestVariables})
	 * @return the cost, at least 1
	 * @throws IllegalStateException naming the property when the expression does not give
	 * a whole number of at least 1
	 */
	public long cost(Object request) {
		if (this.cost == null) {
			return this.constantCost;
		}
		Object value = this.cost.value(request);
		try {
			return RateLimitExpressions.cost(value);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(this.name + ".cost '" + this.cost.text() + "' " + ex.getMessage(), ex);
		}
	}

	/**
	 * Logs that this rule's key was {@code null} for a request that is answered with 400:
	 * at WARN the first time, so that a client cannot flood the log, at DEBUG after.
	 * @param request the request, e.g. {@code GET /api/items}
	 */
	public void reportNullKey(String request) {
		if (firstNullKey()) {
			logger.warn(this.name + ".key '" + keyExpression() + "' evaluated to null for " + request
					+ "; such requests are answered with 400 Bad Request. Set ratelimit.null-key=skip to let them "
					+ "through unlimited. (Logged once per rule.)");
		}
		else if (logger.isDebugEnabled()) {
			logger.debug(this.name + ".key evaluated to null for " + request);
		}
	}

	/**
	 * Returns {@code true} the first time it is called, so that a null key is logged at
	 * WARN once per rule rather than once per request.
	 * @return whether this is the first null key of this rule
	 */
	boolean firstNullKey() {
		return this.nullKeyReported.compareAndSet(false, true);
	}

	/**
	 * Returns the key expression, for messages.
	 * @return the expression text, or {@code ""}
	 */
	String keyExpression() {
		return (this.key != null) ? this.key.text() : "";
	}

	@Override
	public String toString() {
		Bucket bucket = bucket();
		return this.name + " " + this.paths + " " + this.methods + " -> " + ((bucket != null) ? bucket.name() : "")
				+ ((this.concurrency != null)
						? ((bucket != null) ? " and " : "") + this.concurrency.limit().permits() + " in flight" : "");
	}

	private static List<PathPattern> parsePaths(String name, List<String> paths) {
		List<PathPattern> patterns = new ArrayList<>(paths.size());
		for (int i = 0; i < paths.size(); i++) {
			String path = paths.get(i);
			try {
				patterns.add(PathPatternParser.defaultInstance.parse(path));
			}
			catch (PatternParseException ex) {
				throw new InvalidFilterRuleException(name + ".paths[" + i + "]",
						name + ".paths[" + i + "]: '" + path + "' is not a valid path pattern (" + ex.getMessage()
								+ "); use Spring's PathPattern syntax, " + "e.g. /api/** or /users/{id}",
						"Correct " + name + ".paths[" + i + "] in Spring's PathPattern syntax, e.g. /api/** or "
								+ "/users/{id}.",
						ex);
			}
		}
		return List.copyOf(patterns);
	}

	private static Set<String> parseMethods(String name, List<String> methods) {
		Set<String> result = new LinkedHashSet<>();
		for (int i = 0; i < methods.size(); i++) {
			String method = methods.get(i).trim().toUpperCase(Locale.ROOT);
			if (!KNOWN_METHODS.contains(method)) {
				throw new InvalidFilterRuleException(name + ".methods[" + i + "]",
						name + ".methods[" + i + "]: '" + methods.get(i) + "' is not an HTTP method; use one of "
								+ String.join(", ", KNOWN_METHODS),
						"Set " + name + ".methods[" + i + "] to one of " + String.join(", ", KNOWN_METHODS) + ".");
			}
			result.add(method);
		}
		if (result.contains("GET")) {
			result.add("HEAD");
		}
		return Set.copyOf(result);
	}

	private static @Nullable Long parseLong(String text) {
		try {
			return Long.parseLong(text);
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * Builds a {@link FilterRule}; every value is validated by {@link #build}.
	 */
	public static final class Builder {

		private final String name;

		private final @Nullable Supplier<Bucket> bucket;

		private @Nullable ConcurrencyLimiter concurrency;

		private List<String> paths = List.of();

		private List<String> methods = List.of();

		private String key = "";

		private String cost = "1";

		private String settle = "";

		private NullKeyPolicy nullKeyPolicy = NullKeyPolicy.ERROR;

		private Builder(String name, @Nullable Supplier<Bucket> bucket) {
			this.name = Objects.requireNonNull(name, "'name' must not be null");
			this.bucket = bucket;
		}

		/**
		 * Sets the limit on the requests of a key in flight at once; none by default.
		 * @param concurrency the limiter, keyed like the rule's rate limit
		 * @return this builder
		 */
		public Builder concurrency(@Nullable ConcurrencyLimiter concurrency) {
			this.concurrency = concurrency;
			return this;
		}

		/**
		 * Sets the path patterns; empty (the default) matches every path.
		 * @param paths patterns in Spring's {@code PathPattern} syntax, matched against
		 * the path without the context path
		 * @return this builder
		 */
		public Builder paths(List<String> paths) {
			this.paths = List.copyOf(paths);
			return this;
		}

		/**
		 * Sets the HTTP methods; empty (the default) matches every method.
		 * @param methods method names, case-insensitive
		 * @return this builder
		 */
		public Builder methods(List<String> methods) {
			this.methods = List.copyOf(methods);
			return this;
		}

		/**
		 * Sets the SpEL for the key; empty (the default) means one limit shared by every
		 * client.
		 * @param key the expression, e.g. {@code #clientIp}
		 * @return this builder
		 */
		public Builder key(String key) {
			this.key = Objects.requireNonNull(key, "'key' must not be null");
			return this;
		}

		/**
		 * Sets the SpEL for the permits a request takes; {@code 1} by default.
		 * @param cost the expression or a whole number
		 * @return this builder
		 */
		public Builder cost(String cost) {
			this.cost = Objects.requireNonNull(cost, "'cost' must not be null");
			return this;
		}

		/**
		 * Sets the SpEL for what a request really used, read from its response
		 * ({@link ResponseSettlement}); blank for none.
		 * @param settle the SpEL
		 * @return this builder
		 */
		public Builder settle(String settle) {
			this.settle = Objects.requireNonNull(settle, "'settle' must not be null");
			return this;
		}

		/**
		 * Sets what happens when the key evaluates to {@code null}; {@code ERROR} by
		 * default.
		 * @param nullKeyPolicy the policy
		 * @return this builder
		 */
		public Builder nullKeyPolicy(NullKeyPolicy nullKeyPolicy) {
			this.nullKeyPolicy = Objects.requireNonNull(nullKeyPolicy, "'nullKeyPolicy' must not be null");
			return this;
		}

		/**
		 * Parses and validates the rule.
		 * @param expressions parses and evaluates the SpEL
		 * @param requestType the type of the request object expressions see as
		 * {@code #request}, e.g. {@code HttpServletRequest}
		 * @return the rule
		 * @throws InvalidFilterRuleException naming the property of a bad path pattern,
		 * method or cost, or of an expression that reads what the request does not offer
		 * @throws RateLimitExpressions.InvalidExpressionException naming the property of
		 * an expression that does not parse
		 */
		public FilterRule build(RateLimitExpressions expressions, Class<?> requestType) {
			return build(expressions, RequestVariables.of(requestType));
		}

		/**
		 * Parses and validates the rule for a request stack.
		 * @param expressions parses and evaluates the SpEL
		 * @param variables what expressions see of a request ({@code #request},
		 * {@code #clientIp}, ...)
		 * @return the rule
		 * @throws IllegalArgumentException naming the property of a bad path pattern or
		 * method
		 * @throws IllegalStateException naming the property of a bad expression or cost
		 */
		public FilterRule build(RateLimitExpressions expressions, RequestVariables variables) {
			return new FilterRule(this, Objects.requireNonNull(expressions, "'expressions' must not be null"),
					Objects.requireNonNull(variables, "'variables' must not be null"));
		}

	}

}
