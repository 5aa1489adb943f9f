package io.github.ratelimit.gateway;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.expression.NearestNames;
import io.github.ratelimit.web.InFlightPermits;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.ResponseLimits;
import io.github.ratelimit.web.ResponseSettlement;

/**
 * A Spring Cloud Gateway
 * {@link org.springframework.cloud.gateway.filter.ratelimit.RateLimiter RateLimiter} for
 * the {@code RequestRateLimiter} filter, backed by the buckets of
 * {@code ratelimit.buckets}: any of the seven algorithms, several limits per bucket,
 * shadow mode, on the configured store (Redis or in-memory) with its failure mode.
 * <p>
 * A route names its bucket, and optionally the permits each request costs, in the
 * filter's arguments ({@value #CONFIGURATION_PROPERTY_NAME}{@code .bucket},
 * {@value #CONFIGURATION_PROPERTY_NAME}{@code .cost}); without them its bucket is the one
 * named like the route id, at cost 1. The key within the bucket is what the route's
 * {@code KeyResolver} gives, so two routes naming one bucket share its counter for each
 * key. A bucket no {@code ratelimit.buckets} entry (or {@code @RateLimited} method)
 * defines is an {@link InvalidRouteException} naming the route, the bucket and the fix,
 * never a silent default.
 * <p>
 * Permits are taken through the {@link Acquirer}'s asynchronous path, so no Netty thread
 * waits for Redis, and a leaky bucket's delay is a timer, not a sleep. Every decision
 * gives the response its limit headers ({@link RateLimitHeaders}, as
 * {@code ratelimit.headers} chooses); a rejection adds {@code Retry-After} and the filter
 * answers with its status code (429 by default). When the store cannot decide and
 * {@code ratelimit.failure-mode} is {@code closed}, the request fails with 503 Service
 * Unavailable; {@code fallback} and {@code open} are decided by the store itself.
 * <p>
 * A route with {@code ratelimit.concurrency} also limits how many of a key's requests are
 * in flight at once, across every instance: a permit is taken, off the event loop, before
 * the rate limit is asked, and held until the response is complete, fails or is cancelled
 * (the {@link ResponseSettlementFilter} releases it). Such a route needs no
 * {@code ratelimit.buckets} entry: without one it limits only the requests in flight.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class BucketRateLimiter extends AbstractRateLimiter<BucketRateLimiter.Config> {

	private static final Log logger = LogFactory.getLog(BucketRateLimiter.class);

	/** The {@link Config} arguments after {@code ratelimit.}, as a route writes them. */
	private static final List<String> ARGUMENT_NAMES = List.of("bucket", "cost", "settle", "concurrency",
			"concurrency-lease");

	/** {@link #ARGUMENT_NAMES} as the binder matches them: no dashes, lower case. */
	private static final Set<String> ARGUMENTS = Set.of("bucket", "cost", "settle", "concurrency", "concurrencylease");

	/** Where store calls that block run: never on an event loop. */
	private static final Executor BLOCKING_CALLS = (call) -> Schedulers.boundedElastic().schedule(call);

	/**
	 * The prefix of this limiter's arguments in a {@code RequestRateLimiter} filter, e.g.
	 * {@code ratelimit.bucket: api}.
	 */
	public static final String CONFIGURATION_PROPERTY_NAME = "ratelimit";

	private final BucketRegistry registry;

	private final Acquirer acquirer;

	private final RateLimitHeaders headers;

	private final RateLimitExpressions expressions;

	private final @Nullable ConcurrencyLimiters concurrencyLimiters;

	private final Map<String, RoutePlan> plans = new ConcurrentHashMap<>();

	/**
	 * Routes that settle without the {@link ResponseSettlementFilter}, warned of once.
	 */
	private final Set<String> unsettled = ConcurrentHashMap.newKeySet();

	/**
	 * Routes that limit concurrency without the {@link ResponseSettlementFilter}, warned
	 * of once.
	 */
	private final Set<String> unreleased = ConcurrentHashMap.newKeySet();

	/**
	 * Creates the limiter.
	 * @param registry the buckets routes name
	 * @param acquirer takes the permits
	 * @param headers works out the limit headers
	 * @param configurationService binds the filter arguments of each route
	 */
	public BucketRateLimiter(BucketRegistry registry, Acquirer acquirer, RateLimitHeaders headers,
			@Nullable ConfigurationService configurationService) {
		this(registry, acquirer, headers, configurationService, new RateLimitExpressions(null));
	}

	/**
	 * Creates the limiter.
	 * @param registry the buckets routes name
	 * @param acquirer takes the permits
	 * @param headers works out the limit headers
	 * @param configurationService binds the filter arguments of each route
	 * @param expressions parses and evaluates the routes' {@code ratelimit.settle}
	 */
	public BucketRateLimiter(BucketRegistry registry, Acquirer acquirer, RateLimitHeaders headers,
			@Nullable ConfigurationService configurationService, RateLimitExpressions expressions) {
		this(registry, acquirer, headers, configurationService, expressions, null);
	}

	/**
	 * Creates the limiter.
	 * @param registry the buckets routes name
	 * @param acquirer takes the permits
	 * @param headers works out the limit headers
	 * @param configurationService binds the filter arguments of each route
	 * @param expressions parses and evaluates the routes' {@code ratelimit.settle}
	 * @param concurrencyLimiters the concurrency limits routes with
	 * {@code ratelimit.concurrency} take permits of, or {@code null} when routes cannot
	 * set one
	 */
	public BucketRateLimiter(BucketRegistry registry, Acquirer acquirer, RateLimitHeaders headers,
			@Nullable ConfigurationService configurationService, RateLimitExpressions expressions,
			@Nullable ConcurrencyLimiters concurrencyLimiters) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
		this.concurrencyLimiters = concurrencyLimiters;
		this.registry = Objects.requireNonNull(registry, "'registry' must not be null");
		this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
		this.headers = Objects.requireNonNull(headers, "'headers' must not be null");
		this.expressions = Objects.requireNonNull(expressions, "'expressions' must not be null");
	}

	/**
	 * Binds a route's arguments and checks them while the route is built, so that a
	 * misnamed bucket or a bad cost rejects the route (the gateway reports it with the
	 * route id) rather than its requests.
	 */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		super.onApplicationEvent(event);
		Config config = getConfig().get(event.getRouteId());
		if (config != null) {
			warnOfUnknownArguments(event.getRouteId(), event.getArgs().keySet());
			this.plans.put(event.getRouteId(), plan(event.getRouteId(), config));
		}
	}

	/**
	 * Logs each {@code ratelimit.*} argument that names no setting, with the one it
	 * likely meant: the binder ignores it, and a trial's {@code ratelimit.concurency: 2}
	 * left its route with no concurrency limit without a word.
	 */
	private static void warnOfUnknownArguments(String routeId, Set<String> arguments) {
		String prefix = CONFIGURATION_PROPERTY_NAME + ".";
		for (String argument : arguments) {
			if (!argument.startsWith(prefix)) {
				continue;
			}
			String name = argument.substring(prefix.length());
			if (!ARGUMENTS.contains(name.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT))) {
				List<String> nearest = NearestNames.of(name, ARGUMENT_NAMES)
					.stream()
					.map((known) -> prefix + known)
					.toList();
				logger.warn("Route '" + routeId + "': RequestRateLimiter argument " + argument
						+ " names no setting and is ignored"
						+ (nearest.isEmpty() ? "" : "; did you mean " + String.join(" or ", nearest) + "?")
						+ " The arguments are " + prefix + String.join(", " + prefix, ARGUMENT_NAMES) + ".");
			}
		}
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		RoutePlan plan;
		try {
			plan = this.plans.computeIfAbsent(routeId, (route) -> plan(route, new Config()));
		}
		catch (InvalidRouteException ex) {
			return Mono.error(ex);
		}
		ConcurrencyLimiter concurrency = plan.concurrency();
		Mono<Response> response;
		if (concurrency == null) {
			response = limitRate(routeId, plan, id, new Limits(), null);
		}
		else if (plan.definition() != null) {
			// Rate and concurrency of the route's bucket: one store call, off the event
			// loop; through handle, as limitRate asks.
			response = Mono.deferContextual((context) -> Mono
				.just(PermitRequest.of(plan.bucket(), id, plan.cost())).<CompletionStage<Acquirer
						.Holding>>handle(
								(request, sink) -> sink
									.next(this.acquirer.acquireHoldingAsync(request, concurrency, BLOCKING_CALLS)))
				.flatMap(Mono::fromCompletionStage)
				.flatMap((holding) -> holdUntilComplete(routeId, plan, id, InFlightPermits.of(holding), context)));
		}
		else {
			// Taking a permit is a blocking store call: off the event loop.
			response = Mono.deferContextual((context) -> Mono
				.fromCallable(() -> InFlightPermits.acquire(List.of(new InFlightPermits.Claim(concurrency, id))))
				.subscribeOn(Schedulers.boundedElastic())
				.flatMap((inFlight) -> holdUntilComplete(routeId, plan, id, inFlight, context)));
		}
		return response.onErrorMap(StoreUnavailableException.class,
				(ex) -> new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE,
						"Rate limit store unavailable (ratelimit.failure-mode=closed)", ex));
	}

	/**
	 * Answers for a request that asked for its concurrency permit: a refusal at once;
	 * otherwise the permit is handed to the {@link ResponseSettlementFilter}, which
	 * releases it when the response is complete, and the rate limit (if the route has
	 * one) is asked. A refusal by the rate limit releases the permit at once.
	 */
	private Mono<Response> holdUntilComplete(String routeId, RoutePlan plan, String id, InFlightPermits inFlight,
			ContextView context) {
		Limits limits = new Limits();
		ConcurrencyPermit refused = inFlight.rejection();
		if (refused != null) {
			Decision rejection = refused.decision().asDecision();
			this.headers.addRejection(limits.responseLimits,
					RateLimitHeaders.concurrencyPolicy(refused.bucket(), plan.definition() != null), rejection,
					limits.fields::put);
			return Mono.just(limits.reject(rejection));
		}
		ResponseSettlementFilter.Reservations reservations = context
			.getOrDefault(ResponseSettlementFilter.Reservations.class, null);
		if (reservations != null) {
			reservations.hold(inFlight);
		}
		else {
			inFlight.release();
			if (this.unreleased.add(routeId)) {
				logger.warn("Route '" + routeId + "': " + CONFIGURATION_PROPERTY_NAME + ".concurrency is set, but the "
						+ "ResponseSettlementFilter is not in the gateway's filters, which releases permits when a "
						+ "response is complete, so the route's requests in flight are not limited (logged once)");
			}
		}
		for (ConcurrencyPermit permit : inFlight.held()) {
			this.headers.addInFlight(limits.responseLimits, permit, limits.fields::put);
		}
		if (plan.definition() == null) {
			return Mono.just(limits.allow());
		}
		return limitRate(routeId, plan, id, limits, inFlight.acquisition()).doOnNext((response) -> {
			if (!response.isAllowed()) {
				this.acquirer.waiter().executor().execute(inFlight::release);
			}
		});
	}

	/**
	 * Asks the route's rate limit, unless the store decided it with the permit.
	 * @param decided the acquisition made with the permit, or {@code null}
	 */
	private Mono<Response> limitRate(String routeId, RoutePlan plan, String id, Limits limits,
			@Nullable Acquisition decided) {
		List<PermitRequest> requests = List.of(PermitRequest.of(plan.bucket(), id, plan.cost()));
		// Through handle: Reactor makes the subscriber context's thread locals current
		// around it, even without automatic context propagation, so the exchange's
		// observation is the parent of the decision's.
		Mono<Acquisition> decision = (decided != null) ? Mono.just(decided)
				: Mono.just(requests)
					.<CompletionStage<Acquisition>>handle(
							(toTake, sink) -> sink.next(this.acquirer.acquireAsync(toTake)))
					.flatMap(Mono::fromCompletionStage);
		return decision
			.transformDeferredContextual((acquired, context) -> (plan.settlement() == null) ? acquired
					: acquired.doOnNext((acquisition) -> reserve(routeId, plan, acquisition, context)))
			.map((acquisition) -> response(acquisition, limits));
	}

	/**
	 * Hands a granted reservation of a route that settles to the
	 * {@link ResponseSettlementFilter} of its exchange, which settles it from the
	 * response.
	 */
	private void reserve(String routeId, RoutePlan plan, Acquisition acquisition, ContextView context) {
		ResponseSettlement settlement = plan.settlement();
		if (!acquisition.granted() || settlement == null) {
			return;
		}
		ResponseSettlementFilter.Reservations reservations = context
			.getOrDefault(ResponseSettlementFilter.Reservations.class, null);
		if (reservations != null) {
			reservations.add(acquisition.results().get(0), settlement);
		}
		else if (this.unsettled.add(routeId)) {
			logger.warn("Route '" + routeId + "': " + CONFIGURATION_PROPERTY_NAME + ".settle is set, but the "
					+ "ResponseSettlementFilter is not in the gateway's filters, so its requests keep their cost "
					+ "(logged once)");
		}
	}

	private Response response(Acquisition acquisition, Limits limits) {
		for (RateLimitResult result : acquisition.results()) {
			this.headers.add(limits.responseLimits, result, limits.fields::put);
		}
		if (!acquisition.granted()) {
			return limits.reject(acquisition.rejection().decision());
		}
		return limits.allow();
	}

	private RoutePlan plan(String routeId, Config config) {
		String argument = CONFIGURATION_PROPERTY_NAME + ".bucket";
		String name = config.getBucket();
		if (name == null || name.isBlank()) {
			name = routeId;
			argument = "its route id (it has no " + argument + " argument)";
		}
		if (config.getCost() < 1) {
			throw new InvalidRouteException(routeId,
					"Route '" + routeId + "': RequestRateLimiter argument " + CONFIGURATION_PROPERTY_NAME
							+ ".cost must be at least 1 but was " + config.getCost() + ".",
					"Set " + CONFIGURATION_PROPERTY_NAME + ".cost to the permits one request takes, or leave it out"
							+ " for 1.");
		}
		ConcurrencyLimiter concurrency = concurrency(routeId, name, config);
		if (this.registry.find(name) == null && concurrency == null) {
			List<String> defined = this.registry.buckets().stream().map(BucketDefinition::name).toList();
			throw new InvalidRouteException(routeId,
					"Route '" + routeId + "': RequestRateLimiter names bucket '" + name + "' by " + argument
							+ ", but no ratelimit.buckets." + name + " entry defines it.",
					"Define it (e.g. ratelimit.buckets." + name + ".limit=100 and ratelimit.buckets." + name
							+ ".window=1m), or set the filter argument " + CONFIGURATION_PROPERTY_NAME
							+ ".bucket to a defined bucket" + (defined.isEmpty() ? "." : ": " + defined + "."));
		}
		BucketDefinition bucket = (this.registry.find(name) != null)
				? this.registry.use(name, "route '" + routeId + "' (RequestRateLimiter)") : null;
		String where = "route '" + routeId + "' RequestRateLimiter argument " + CONFIGURATION_PROPERTY_NAME + ".settle";
		ResponseSettlement settlement;
		try {
			settlement = ResponseSettlement.parse(config.getSettle(), where, this.expressions);
		}
		catch (RuntimeException ex) {
			throw new InvalidRouteException(routeId, "Route '" + routeId + "': " + ex.getMessage(),
					"Correct " + CONFIGURATION_PROPERTY_NAME + ".settle: SpEL with #status and #header('<name>'), e.g."
							+ " #header('X-Tokens-Used'), or leave it out.");
		}
		if (settlement != null && bucket == null) {
			throw new InvalidRouteException(routeId,
					"Route '" + routeId + "': " + CONFIGURATION_PROPERTY_NAME + ".settle is set, but bucket '" + name
							+ "' has no rate limit to settle (no ratelimit.buckets." + name + " entry defines it).",
					"Define ratelimit.buckets." + name + ", or remove " + CONFIGURATION_PROPERTY_NAME + ".settle.");
		}
		return new RoutePlan(bucket, config.getCost(), settlement, concurrency);
	}

	/**
	 * Returns the route's concurrency limit, keyed like its rate limit (by its bucket),
	 * or {@code null} when it sets none.
	 */
	private @Nullable ConcurrencyLimiter concurrency(String routeId, String bucket, Config config) {
		Integer permits = config.getConcurrency();
		String argument = CONFIGURATION_PROPERTY_NAME + ".concurrency";
		if (permits == null) {
			if (config.getConcurrencyLease() != null) {
				throw new InvalidRouteException(routeId,
						"Route '" + routeId + "': RequestRateLimiter argument " + argument + "-lease is set, but "
								+ argument + " is not.",
						"Set " + argument + " to the requests of a key that may be in flight at once, or remove "
								+ argument + "-lease.");
			}
			return null;
		}
		if (this.concurrencyLimiters == null) {
			throw new InvalidRouteException(routeId,
					"Route '" + routeId + "': RequestRateLimiter argument " + argument
							+ " is set, but this BucketRateLimiter was made without concurrency limiters.",
					"Create the BucketRateLimiter with the application's ConcurrencyLimiters, or remove " + argument
							+ ".");
		}
		try {
			String route = "route '" + routeId + "' (RequestRateLimiter)";
			return this.concurrencyLimiters.get(bucket,
					new ConcurrencyLimiters.Settings(permits, config.getConcurrencyLease()),
					new ConcurrencyLimiters.Origin(route, "the argument " + argument + " of " + route,
							"the argument " + argument + "-lease of " + route));
		}
		catch (InvalidRateLimitConfigurationException ex) {
			throw new InvalidRouteException(routeId, "Route '" + routeId + "': " + ex.getMessage(),
					"Correct ratelimit.concurrency." + bucket + ".");
		}
	}

	/**
	 * The limit headers of one response being worked out: rate and concurrency decisions
	 * of a request are advertised together.
	 */
	private static final class Limits {

		private final ResponseLimits responseLimits = new ResponseLimits();

		private final Map<String, String> fields = new LinkedHashMap<>();

		Response allow() {
			return new Response(true, this.fields);
		}

		Response reject(Decision decision) {
			long retryAfter = RateLimitHeaders.retryAfterSeconds(decision);
			if (retryAfter > 0) {
				this.fields.put(HttpHeaders.RETRY_AFTER, String.valueOf(retryAfter));
			}
			return new Response(false, this.fields);
		}

	}

	/**
	 * The bucket a route takes its permits from, how many per request, and what settles
	 * them from the response. The bucket is read per request, so that limits changed at
	 * runtime apply to the route.
	 */
	private record RoutePlan(@Nullable BucketDefinition definition, long cost, @Nullable ResponseSettlement settlement,
			@Nullable ConcurrencyLimiter concurrency) {

		Bucket bucket() {
			BucketDefinition definition = this.definition;
			if (definition == null) {
				throw new IllegalStateException("The route limits only requests in flight");
			}
			return definition.bucket();
		}

	}

	/**
	 * A route's arguments, bound from its {@code RequestRateLimiter} filter:
	 * {@code ratelimit.bucket} and {@code ratelimit.cost}.
	 */
	public static class Config {

		private @Nullable String bucket;

		private long cost = 1;

		private @Nullable String settle;

		private @Nullable Integer concurrency;

		private @Nullable Duration concurrencyLease;

		/**
		 * Returns the bucket the route takes its permits from.
		 * @return the bucket name, or {@code null} for the bucket named like the route
		 */
		public @Nullable String getBucket() {
			return this.bucket;
		}

		/**
		 * Sets the bucket the route takes its permits from: a {@code ratelimit.buckets}
		 * entry.
		 * @param bucket the bucket name
		 * @return this config
		 */
		public Config setBucket(@Nullable String bucket) {
			this.bucket = bucket;
			return this;
		}

		/**
		 * Returns the permits each request of the route takes.
		 * @return the cost, 1 unless set
		 */
		public long getCost() {
			return this.cost;
		}

		/**
		 * Sets the permits each request of the route takes.
		 * @param cost the cost, at least 1
		 * @return this config
		 */
		public Config setCost(long cost) {
			this.cost = cost;
			return this;
		}

		/**
		 * Returns the SpEL for what a request really used, read from its response.
		 * @return the SpEL, or {@code null} when the cost is final
		 */
		public @Nullable String getSettle() {
			return this.settle;
		}

		/**
		 * Sets the SpEL for what a request really used, evaluated once its response is
		 * complete with {@code #status} and {@code #header('<name>')}, e.g.
		 * {@code #header('X-Tokens-Used')}: the cost is then a reservation, settled as
		 * {@code ratelimit.filter.rules[i].settle} is.
		 * @param settle the SpEL
		 * @return this config
		 */
		public Config setSettle(@Nullable String settle) {
			this.settle = settle;
			return this;
		}

		/**
		 * Returns how many requests of a key may be in flight at once.
		 * @return the permits, or {@code null} when the route does not limit concurrency
		 */
		public @Nullable Integer getConcurrency() {
			return this.concurrency;
		}

		/**
		 * Sets how many requests of a key (what the route's {@code KeyResolver} gives)
		 * may be in flight at once, across every instance; the rest are refused at once.
		 * A permit is held until the response is complete. Overridden by
		 * {@code ratelimit.concurrency.<bucket>.permits}.
		 * @param concurrency the permits, 1 to 100,000
		 * @return this config
		 */
		public Config setConcurrency(@Nullable Integer concurrency) {
			this.concurrency = concurrency;
			return this;
		}

		/**
		 * Returns how long a concurrency permit is held without a renewal.
		 * @return the lease, or {@code null} for the default (30 seconds)
		 */
		public @Nullable Duration getConcurrencyLease() {
			return this.concurrencyLease;
		}

		/**
		 * Sets how long a concurrency permit is held without a renewal: a permit whose
		 * instance crashed or froze comes back after it; held permits are renewed every
		 * third of it. Overridden by {@code ratelimit.concurrency.<bucket>.lease}.
		 * @param concurrencyLease the lease, 1 ms to 1 day
		 * @return this config
		 */
		public Config setConcurrencyLease(@Nullable Duration concurrencyLease) {
			this.concurrencyLease = concurrencyLease;
			return this;
		}

		@Override
		public String toString() {
			return "bucket=" + this.bucket + ", cost=" + this.cost
					+ ((this.settle != null) ? ", settle=" + this.settle : "")
					+ ((this.concurrency != null) ? ", concurrency=" + this.concurrency : "");
		}

	}

}
