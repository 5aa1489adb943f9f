package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationStartedEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.autoconfigure.RateLimitProperties.Rule;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Logs, once, at INFO, when the application has started (the context refreshed, so every
 * {@code @RateLimited} bucket registered, and every listener of the refresh run, so every
 * Spring Cloud Gateway route built), what rate limiting runs with: the store and where it
 * points, the failure mode, every bucket with its limits and where they are defined, the
 * filter rules in the order they are tried, and what was left out and why. A few lines;
 * nothing is logged per request.
 */
class RateLimitStartupSummary implements ApplicationListener<ApplicationEvent> {

	private static final Log logger = LogFactory.getLog(RateLimitStartupSummary.class);

	/** The bean a {@link SpringApplication} registers in the context it runs. */
	private static final String SPRING_APPLICATION_ARGUMENTS = "springApplicationArguments";

	private static final String CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	private final ApplicationContext context;

	private final RateLimitProperties properties;

	private final BucketRegistry registry;

	private final RateLimitStore store;

	private final @Nullable StoreTarget storeTarget;

	private final @Nullable EvictionPolicySource evictionPolicy;

	private final AtomicBoolean logged = new AtomicBoolean();

	RateLimitStartupSummary(ApplicationContext context, RateLimitProperties properties, BucketRegistry registry,
			RateLimitStore store, @Nullable StoreTarget storeTarget) {
		this(context, properties, registry, store, storeTarget, null);
	}

	RateLimitStartupSummary(ApplicationContext context, RateLimitProperties properties, BucketRegistry registry,
			RateLimitStore store, @Nullable StoreTarget storeTarget, @Nullable EvictionPolicySource evictionPolicy) {
		this.context = context;
		this.properties = properties;
		this.registry = registry;
		this.store = store;
		this.storeTarget = storeTarget;
		this.evictionPolicy = evictionPolicy;
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		boolean now;
		if (event instanceof ApplicationStartedEvent started) {
			now = started.getApplicationContext() == this.context;
		}
		else if (event instanceof ContextRefreshedEvent refreshed) {
			// A child context's refresh reaches the parent's listeners too. A context a
			// SpringApplication runs is summed up once it has started: other listeners
			// of the refresh build what uses buckets too (a gateway's routes).
			now = refreshed.getApplicationContext() == this.context
					&& !this.context.containsBean(SPRING_APPLICATION_ARGUMENTS);
		}
		else {
			now = false;
		}
		if (now && this.logged.compareAndSet(false, true) && logger.isInfoEnabled()) {
			logger.info(summary());
		}
	}

	/**
	 * Returns the summary, lines separated by {@code \n}.
	 * @return the summary
	 */
	String summary() {
		List<BucketDefinition> buckets = List.copyOf(this.registry.buckets());
		List<Rule> rules = this.properties.getFilter().getRules();
		// The servlet filter's registration or the WebFlux filter: whichever this
		// application has applies the rules.
		boolean filterActive = !rules.isEmpty() && this.properties.getFilter().isEnabled()
				&& (this.context.containsBean("rateLimitFilterRegistration")
						|| this.context.containsBean("rateLimitWebFilter"));
		StringBuilder text = new StringBuilder("Rate limiting: store ").append(store())
			.append(", failure mode ")
			.append(this.properties.getFailureMode().name().toLowerCase(Locale.ROOT))
			.append(", ")
			.append(count(buckets.size(), "bucket"))
			.append(", ")
			.append(count(filterActive ? rules.size() : 0, "filter rule"));
		if (!buckets.isEmpty()) {
			text.append("\n  buckets: ").append(buckets.stream().map(this::describe).collect(Collectors.joining("; ")));
		}
		if (filterActive) {
			text.append("\n  filter rules (order ")
				.append(this.properties.getFilter().getOrder())
				.append(", ")
				.append(this.properties.getFilter().getMatch().name().toLowerCase(Locale.ROOT))
				.append(" match): ");
			List<String> described = new ArrayList<>();
			for (int i = 0; i < rules.size(); i++) {
				described.add(describe(i, rules.get(i)));
			}
			text.append(String.join("; ", described));
		}
		ConcurrencyLimiters concurrency = this.context.getBeanProvider(ConcurrencyLimiters.class).getIfAvailable();
		Map<String, ConcurrencyLimiter> limiters = (concurrency != null) ? new TreeMap<>(concurrency.all()) : Map.of();
		if (!limiters.isEmpty()) {
			text.append("\n  concurrency: ")
				.append(limiters.values()
					.stream()
					.map((limiter) -> limiter.bucket() + " " + limiter.limit())
					.collect(Collectors.joining("; ")));
		}
		// Said, so that whoever turned it on sees it took effect (and where it answers).
		if (this.context.containsBean("rateLimitStatusFilterRegistration")
				|| this.context.containsBean("rateLimitStatusWebFilter")) {
			text.append("\n  status endpoint: GET ").append(this.properties.getStatusEndpoint().getPath());
		}
		List<String> skipped = skipped(buckets, rules, filterActive);
		if (!skipped.isEmpty()) {
			text.append("\n  skipped: ").append(String.join("; ", skipped));
		}
		return text.toString();
	}

	private String store() {
		if (this.storeTarget != null && this.store instanceof FailoverRateLimitStore) {
			if (this.evictionPolicy == null) {
				return this.storeTarget.description();
			}
			// Read by the heartbeat, which starts (and beats once) before the context is
			// refreshed.
			String policy = this.evictionPolicy.policy();
			return this.storeTarget.description() + " (maxmemory-policy " + policy
					+ (EvictionPolicySource.evicts(policy) ? ", evicts limit keys" : "") + ")";
		}
		if ("memory".equals(this.store.name())) {
			return "in-memory (max-keys " + this.properties.getMemory().getMaxKeys() + ")";
		}
		return this.store.name() + " (" + this.store.getClass().getName() + ")";
	}

	private String describe(BucketDefinition bucket) {
		StringBuilder text = new StringBuilder(bucket.name()).append(' ');
		String perCall = this.registry.perCallLimit(bucket.name());
		List<String> limits = new ArrayList<>();
		for (int i = 0; i < bucket.limits().size(); i++) {
			LimitSpec spec = bucket.limits().get(i);
			limits.add((i == 0 && perCall != null)
					? spec.toString().replaceFirst("^\\d+", Matcher.quoteReplacement("per call (" + perCall + ")"))
					: spec.toString());
		}
		text.append(String.join(" + ", limits));
		if (bucket.mode() != LimitMode.ENFORCE) {
			text.append(' ').append(bucket.mode().name().toLowerCase(Locale.ROOT));
		}
		String origin = this.registry.origin(bucket.name());
		String where;
		if (bucket.source() == BucketSource.CONFIGURATION) {
			where = "ratelimit.buckets." + bucket.name() + ((origin != null) ? ", used by " + origin : "");
		}
		else {
			where = (origin != null) ? origin : bucket.source().name().toLowerCase(Locale.ROOT);
		}
		return text.append(" [").append(where).append(']').toString();
	}

	private static String describe(int index, Rule rule) {
		String methods = rule.getMethods().isEmpty() ? "*" : String.join(",", rule.getMethods());
		String paths = rule.getPaths().isEmpty() ? "/**" : String.join(",", rule.getPaths());
		String bucket = StringUtils.hasText(rule.getBucket()) ? rule.getBucket() : "filter-" + index;
		String key = StringUtils.hasText(rule.getKey()) ? " by " + rule.getKey() : " shared";
		String cost = "1".equals(rule.getCost().trim()) ? "" : " cost " + rule.getCost();
		String settle = rule.getSettle().isBlank() ? "" : " settle " + rule.getSettle();
		String concurrency = (rule.getConcurrency() != null) ? " at most " + rule.getConcurrency() + " in flight" : "";
		return "[" + index + "] " + methods + " " + paths + " -> " + bucket + key + cost + settle + concurrency;
	}

	private List<String> skipped(List<BucketDefinition> buckets, List<Rule> rules, boolean filterActive) {
		List<String> skipped = new ArrayList<>();
		if (!rules.isEmpty() && !filterActive) {
			String why = !this.properties.getFilter().isEnabled() ? "ratelimit.filter.enabled=false"
					: "not a servlet or reactive web application";
			skipped.add(count(rules.size(), "filter rule") + " (" + why + ")");
		}
		for (BucketDefinition bucket : buckets) {
			if (bucket.source() == BucketSource.CONFIGURATION && this.registry.origin(bucket.name()) == null) {
				skipped.add("ratelimit.buckets." + bucket.name()
						+ " is used by no annotation or filter rule (a typo, or for RateLimiters.get)");
			}
		}
		ClassLoader classLoader = getClass().getClassLoader();
		if (!ClassUtils.isPresent("org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor", classLoader)) {
			skipped.add("@RateLimited (spring-aop is not on the class path)");
		}
		if ("memory".equals(this.store.name()) && ClassUtils.isPresent(CONNECTION_FACTORY, classLoader)) {
			skipped.add("Redis store (" + redisSkipped(classLoader) + ")");
		}
		return skipped;
	}

	private String redisSkipped(ClassLoader classLoader) {
		String store = this.properties.getStore().name().toLowerCase(Locale.ROOT);
		if (!store.equals("auto")) {
			return "ratelimit.store=" + store;
		}
		try {
			int factories = ((ListableBeanFactory) this.context)
				.getBeanNamesForType(ClassUtils.forName(CONNECTION_FACTORY, classLoader)).length;
			return (factories == 0) ? "no RedisConnectionFactory bean"
					: factories + " RedisConnectionFactory beans and none is @Primary";
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return "no RedisConnectionFactory";
		}
	}

	private static String count(int count, String noun) {
		return count + " " + noun + ((count == 1) ? "" : "s");
	}

	/**
	 * Where the Redis store points, e.g. {@code redis://127.0.0.1:6379}, for the summary.
	 *
	 * @param description the target
	 */
	record StoreTarget(String description) {
	}

}
