package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.MatchMode;

/**
 * Configuration of rate limiting, under {@code ratelimit}. Validates itself when bound
 * (Spring Boot applies a properties class's own {@link Validator}), so a mistake fails
 * startup once, naming the property. A key under {@code ratelimit} that names nothing
 * here fails startup too: a misspelt key (say {@code concurrent} for {@code concurrency}
 * on a filter rule) would otherwise leave a limit silently unset.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties implements Validator {

	/**
	 * Whether rate limiting is enabled. When false no limiter bean is created and methods
	 * annotated with @RateLimited run unlimited.
	 */
	private boolean enabled = true;

	/**
	 * Where limiter state lives: redis when a RedisConnectionFactory exists (auto),
	 * always redis, or always in this JVM's memory.
	 */
	private StoreType store = StoreType.AUTO;

	/**
	 * Prefix of every Redis key.
	 */
	private String keyPrefix = "rl";

	/**
	 * What happens while the store fails: per-instance in-memory limits (fallback, see
	 * ratelimit.fallback.instances), allow everything (open) or reject everything with
	 * 503 (closed).
	 */
	private FailureMode failureMode = FailureMode.FALLBACK;

	/**
	 * Which rate limit headers responses carry: the IETF draft's RateLimit-Policy and
	 * RateLimit, the legacy X-RateLimit-*, both, or none.
	 */
	private HeadersMode headers = HeadersMode.DRAFT;

	/**
	 * What happens when a key expression evaluates to null: fail the call (error) or let
	 * it through unlimited (skip).
	 */
	private NullKeyPolicy nullKey = NullKeyPolicy.ERROR;

	/**
	 * Limit settings used where neither a bucket's configuration nor its annotation sets
	 * them.
	 */
	private final Limit defaults = new Limit(Algorithm.TOKEN_BUCKET, 100L, Duration.ofMinutes(1));

	/**
	 * Limits per bucket name. They override what a @RateLimited annotation or a filter
	 * rule sets for the same bucket.
	 */
	private final Map<String, Bucket> buckets = new LinkedHashMap<>();

	/**
	 * Concurrency limits per bucket name: calls in flight per key. They override what a
	 * @ConcurrencyLimited annotation sets for the same bucket.
	 */
	private final Map<String, Concurrency> concurrency = new LinkedHashMap<>();

	private final Filter filter = new Filter();

	private final ClientIp clientIp = new ClientIp();

	private final Redis redis = new Redis();

	private final Breaker breaker = new Breaker();

	private final Fallback fallback = new Fallback();

	private final Memory memory = new Memory();

	private final Endpoint endpoint = new Endpoint();

	private final Metrics metrics = new Metrics();

	private final Observations observations = new Observations();

	private final StatusEndpoint statusEndpoint = new StatusEndpoint();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public StoreType getStore() {
		return this.store;
	}

	public void setStore(StoreType store) {
		this.store = store;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	public HeadersMode getHeaders() {
		return this.headers;
	}

	public void setHeaders(HeadersMode headers) {
		this.headers = headers;
	}

	public NullKeyPolicy getNullKey() {
		return this.nullKey;
	}

	public void setNullKey(NullKeyPolicy nullKey) {
		this.nullKey = nullKey;
	}

	public Limit getDefaults() {
		return this.defaults;
	}

	public Map<String, Concurrency> getConcurrency() {
		return this.concurrency;
	}

	public Map<String, Bucket> getBuckets() {
		return this.buckets;
	}

	public Filter getFilter() {
		return this.filter;
	}

	public ClientIp getClientIp() {
		return this.clientIp;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Breaker getBreaker() {
		return this.breaker;
	}

	public Fallback getFallback() {
		return this.fallback;
	}

	public Memory getMemory() {
		return this.memory;
	}

	public Endpoint getEndpoint() {
		return this.endpoint;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Observations getObservations() {
		return this.observations;
	}

	public StatusEndpoint getStatusEndpoint() {
		return this.statusEndpoint;
	}

	@Override
	public boolean supports(Class<?> type) {
		return RateLimitProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		RateLimitPropertiesValidator.validate((RateLimitProperties) target, errors);
	}

	/**
	 * Where limiter state lives.
	 */
	public enum StoreType {

		/** Redis when a RedisConnectionFactory bean exists, memory otherwise. */
		AUTO,

		/** Redis; startup fails when there is no RedisConnectionFactory. */
		REDIS,

		/** This JVM's memory: limits are per instance. */
		MEMORY

	}

	/**
	 * Where Redis decisions read the time.
	 */
	public enum TimeSourceType {

		/** Redis TIME: every instance agrees whatever its own clock says. */
		REDIS,

		/**
		 * This JVM's clock, passed to the script. Instances whose clocks differ by less
		 * than a window stay within their limits (a window never goes back, a bucket
		 * never gives time back), windows follow the clock ahead, and window keys live a
		 * window longer.
		 */
		LOCAL

	}

	/**
	 * One limit. Unset fields come from the annotation, then from ratelimit.defaults.
	 */
	public static class Limit {

		/**
		 * The algorithm: fixed-window, sliding-log, sliding-window,
		 * sliding-window-counter, token-bucket, leaky-bucket or gcra.
		 */
		private @Nullable Algorithm algorithm;

		/**
		 * Permits per window.
		 */
		private @Nullable Long limit;

		/**
		 * The window, e.g. 500ms, 10s, 1m, 1h, 1d.
		 */
		private @Nullable Duration window;

		/**
		 * Bucket capacity (token-bucket, gcra) or queue size (leaky-bucket). Defaults to
		 * the limit.
		 */
		private @Nullable Long burst;

		/**
		 * Sub-windows of the sliding-window-counter algorithm. Defaults to 10.
		 */
		private @Nullable Integer segments;

		/**
		 * How long a key is blocked once this limit rejects one of its requests, e.g.
		 * 15m: every request of the key is then rejected, with a Retry-After at the end
		 * of the block. None by default.
		 */
		private @Nullable Duration penalty;

		/**
		 * Counts by the calendar instead of a window: day, week (ISO, from Monday),
		 * month, quarter or year, from local midnight in the zone. Fixed-window only; the
		 * window is then the calendar's. None by default.
		 */
		private @Nullable String calendar;

		/**
		 * Time zone of a calendar window, an IANA id such as Europe/Berlin. Defaults to
		 * UTC.
		 */
		private @Nullable String zone;

		public Limit() {
		}

		Limit(Algorithm algorithm, Long limit, Duration window) {
			this.algorithm = algorithm;
			this.limit = limit;
			this.window = window;
		}

		public @Nullable Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(@Nullable Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public @Nullable Long getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Long limit) {
			this.limit = limit;
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

		public @Nullable Integer getSegments() {
			return this.segments;
		}

		public void setSegments(@Nullable Integer segments) {
			this.segments = segments;
		}

		public @Nullable Duration getPenalty() {
			return this.penalty;
		}

		public void setPenalty(@Nullable Duration penalty) {
			this.penalty = penalty;
		}

		public @Nullable String getCalendar() {
			return this.calendar;
		}

		public void setCalendar(@Nullable String calendar) {
			this.calendar = calendar;
		}

		public @Nullable String getZone() {
			return this.zone;
		}

		public void setZone(@Nullable String zone) {
			this.zone = zone;
		}

	}

	/**
	 * One bucket: a single limit, or several under limits.
	 */
	public static class Bucket extends Limit {

		/**
		 * Several limits, all enforced (e.g. 10 per second and 1000 per hour). Unset
		 * fields of each come from the bucket's own settings.
		 */
		private final List<Limit> limits = new ArrayList<>();

		/**
		 * Whether rejections are enforced, or only counted and reported (shadow).
		 */
		private @Nullable LimitMode mode;

		public List<Limit> getLimits() {
			return this.limits;
		}

		public @Nullable LimitMode getMode() {
			return this.mode;
		}

		public void setMode(@Nullable LimitMode mode) {
			this.mode = mode;
		}

	}

	/**
	 * The servlet filter that limits URLs by rules.
	 */
	public static class Filter {

		/**
		 * Whether the filter is registered (when rules exist and the app is a servlet or
		 * a reactive web application).
		 */
		private boolean enabled = true;

		/**
		 * Order of the filter. The default runs after forwarded-header handling and
		 * before Spring Security (-100), so floods are stopped before authentication
		 * work.
		 */
		private int order = -110;

		/**
		 * Whether only the first matching rule applies, or all matching rules.
		 */
		private MatchMode match = MatchMode.FIRST;

		/**
		 * The rules, tried in order.
		 */
		private final List<Rule> rules = new ArrayList<>();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

		public MatchMode getMatch() {
			return this.match;
		}

		public void setMatch(MatchMode match) {
			this.match = match;
		}

		public List<Rule> getRules() {
			return this.rules;
		}

	}

	/**
	 * A filter rule: which requests, which bucket, which key. Limit fields set here are
	 * the rule's own defaults, overridden by ratelimit.buckets.
	 */
	public static class Rule extends Limit {

		/**
		 * The bucket. Defaults to filter-<index of the rule>.
		 */
		private @Nullable String bucket;

		/**
		 * Path patterns (Spring's PathPattern syntax, e.g. /api/**); empty matches every
		 * path.
		 */
		private final List<String> paths = new ArrayList<>();

		/**
		 * HTTP methods; empty matches every method.
		 */
		private final List<String> methods = new ArrayList<>();

		/**
		 * SpEL for the key, with #clientIp (the client's address, see
		 * ratelimit.client-ip), #request (the HttpServletRequest, or on WebFlux the
		 * ServerHttpRequest) and beans as @name, e.g. #clientIp. Empty means one limit
		 * shared by every client.
		 */
		private String key = "";

		/**
		 * SpEL for the permits a request takes. Defaults to 1. With settle, the permits
		 * it reserves.
		 */
		private String cost = "1";

		/**
		 * SpEL for the permits a request really used, evaluated once its response is
		 * complete, with #status (the response's status code) and #header('<name>') (the
		 * first value of a response header), e.g. #header('X-Tokens-Used') or #status >=
		 * 500 ? 0 : #header('X-Tokens-Used'). The request then settles: less than its
		 * cost gives the difference back, more takes the excess even past the limit (the
		 * key goes into debt). A value that is no whole number keeps the cost; a negative
		 * one settles 0. Empty means the cost is final.
		 */
		private String settle = "";

		/**
		 * Requests of one key that may be in flight at once, across every instance that
		 * shares the store: the rest get 429 at once. A permit is held until the response
		 * is complete (streamed and asynchronous responses included). Overridden by
		 * ratelimit.concurrency.<bucket>.permits. A rule with this and no limit of its
		 * own (nor a ratelimit.buckets entry for its bucket) limits only requests in
		 * flight.
		 */
		private @Nullable Integer concurrency;

		/**
		 * How long a concurrency permit is held without a renewal: a permit whose
		 * instance crashed or froze comes back after it; held permits are renewed every
		 * third of it. 1s to 1d; a number without a unit is seconds. Defaults to 30s.
		 * Overridden by ratelimit.concurrency.<bucket>.lease.
		 */
		@DurationUnit(ChronoUnit.SECONDS)
		private @Nullable Duration concurrencyLease;

		public @Nullable String getBucket() {
			return this.bucket;
		}

		public void setBucket(@Nullable String bucket) {
			this.bucket = bucket;
		}

		public List<String> getPaths() {
			return this.paths;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public String getKey() {
			return this.key;
		}

		public void setKey(String key) {
			this.key = key;
		}

		public String getCost() {
			return this.cost;
		}

		public void setCost(String cost) {
			this.cost = cost;
		}

		public String getSettle() {
			return this.settle;
		}

		public void setSettle(String settle) {
			this.settle = settle;
		}

		public @Nullable Integer getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(@Nullable Integer concurrency) {
			this.concurrency = concurrency;
		}

		public @Nullable Duration getConcurrencyLease() {
			return this.concurrencyLease;
		}

		public void setConcurrencyLease(@Nullable Duration concurrencyLease) {
			this.concurrencyLease = concurrencyLease;
		}

	}

	/**
	 * How #clientIp finds the client's address behind proxies, on every request stack.
	 */
	public static class ClientIp {

		/**
		 * Addresses or CIDR ranges of the proxies in front of the application whose
		 * forwarded header #clientIp believes, e.g. 10.0.0.0/8, 2001:db8::/32 or
		 * 127.0.0.1. Starting from the address of the connection, #clientIp walks the
		 * header from the right past every trusted proxy; the first address that is not
		 * one is the client. A header from a connection that is not a trusted proxy is
		 * ignored. Empty trusts no proxy: #clientIp is the address of the connection.
		 */
		private List<String> trustedProxies = new ArrayList<>();

		/**
		 * How many proxies in front of the application are trusted whatever their
		 * address, counting the connection's peer as the first. For proxies whose
		 * addresses are not known in advance; only safe when clients cannot reach the
		 * application but through all of them. Adds to trusted-proxies.
		 */
		private int trustedHops;

		/**
		 * The header the trusted proxies put the client's address in: X-Forwarded-For (a
		 * list each proxy appends to), Forwarded (RFC 7239, its for= parameters), or a
		 * header holding one address, such as X-Real-IP. Only this header is read: a
		 * client could send another.
		 */
		private String header = "X-Forwarded-For";

		public List<String> getTrustedProxies() {
			return this.trustedProxies;
		}

		public void setTrustedProxies(List<String> trustedProxies) {
			this.trustedProxies = trustedProxies;
		}

		public int getTrustedHops() {
			return this.trustedHops;
		}

		public void setTrustedHops(int trustedHops) {
			this.trustedHops = trustedHops;
		}

		public String getHeader() {
			return this.header;
		}

		public void setHeader(String header) {
			this.header = header;
		}

	}

	/**
	 * Micrometer meters.
	 */
	public static class Metrics {

		/**
		 * Share of a limit (0 to 1) that an allowed request leaves remaining below which
		 * it also counts in ratelimit.decisions.near.limit: with 0.1 and a limit of 100,
		 * the requests that leave fewer than 10 permits. 0 turns the counter off.
		 */
		private double nearLimitShare = 0.1;

		public double getNearLimitShare() {
			return this.nearLimitShare;
		}

		public void setNearLimitShare(double nearLimitShare) {
			this.nearLimitShare = nearLimitShare;
		}

	}

	/**
	 * Micrometer observations of decisions (ratelimit.decision, ratelimit.wait), which
	 * tracing makes spans of.
	 */
	public static class Observations {

		/**
		 * Whether each decision, and each wait for a permit, is a Micrometer observation
		 * when the application has an ObservationRegistry.
		 */
		private boolean enabled = true;

		/**
		 * Whether observations carry the key (a user, an IP address) as a high
		 * cardinality key value. Off by default: the key is user data, and traces are
		 * often kept longer and seen by more people than the application's own logs.
		 */
		private boolean includeKey;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public boolean isIncludeKey() {
			return this.includeKey;
		}

		public void setIncludeKey(boolean includeKey) {
			this.includeKey = includeKey;
		}

	}

	/**
	 * The ratelimits actuator endpoint.
	 */
	public static class Endpoint {

		/**
		 * Whether the endpoint may set and clear live overrides of bucket limits (POST
		 * and DELETE /actuator/ratelimits/{bucket}; 403 while off). A second guard,
		 * separate from the endpoint's access: management.endpoint.ratelimits.access
		 * (read-only by default) must be unrestricted for any write, key resets included,
		 * and this opens limit changes on top, so support staff can reset a locked-out
		 * customer without being able to change limits. Off by default: a change applies
		 * to every instance on the same Redis, so open it only where the actuator is
		 * secured. Overrides set elsewhere are applied whatever this says.
		 */
		private boolean limitsWriteEnabled;

		public boolean isLimitsWriteEnabled() {
			return this.limitsWriteEnabled;
		}

		public void setLimitsWriteEnabled(boolean limitsWriteEnabled) {
			this.limitsWriteEnabled = limitsWriteEnabled;
		}

	}

	/**
	 * The status endpoint, where a client reads its own limits and what is left of them
	 * without spending any (like GitHub's GET /rate_limit). Not an actuator endpoint:
	 * callers are the application's clients.
	 */
	public static class StatusEndpoint {

		/**
		 * Whether GET on the status path answers the calling client's state under each
		 * filter rule, keyed as the rule keys its requests. Off by default: it tells any
		 * client the limits it is under. A client only ever sees the state of its own
		 * keys; @RateLimited methods, whose keys come from method arguments, are not
		 * shown.
		 */
		private boolean enabled;

		/**
		 * Path of the status endpoint within the application (without the context path).
		 * It is answered before the filter rules apply, so asking never spends a permit.
		 */
		private String path = "/rate-limit";

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

	}

	/**
	 * The Redis store.
	 */
	public static class Redis {

		/**
		 * Longest Redis may take to answer a decision once it is sent, before the failure
		 * mode decides instead. Time this application spends too busy to run does not
		 * count: the deadline is checked on the connection's I/O thread after it has read
		 * what arrived. Shorter bounds the latency a stalled Redis adds; longer keeps
		 * decisions on Redis (one limit for all instances) through longer slow spells.
		 */
		private Duration timeout = Duration.ofMillis(100);

		/**
		 * Longest startup waits for Redis to connect, load the script and warm up before
		 * the application goes on without it, and longest a decision waits for a
		 * connection being made.
		 */
		private Duration connectTimeout = Duration.ofSeconds(5);

		/**
		 * Where decisions read the time: Redis TIME, which every instance shares, or this
		 * JVM's clock (instances' clocks must then be less than a window apart).
		 */
		private TimeSourceType timeSource = TimeSourceType.REDIS;

		/**
		 * How often each instance tells Redis it is alive and reads, in one script call,
		 * what the instances share: how many are alive (each enforces its share of every
		 * limit while Redis fails), live limit changes, key resets made through any
		 * instance, and whether Redis lost its data. Live changes and resets apply on
		 * every instance within about this long, and health knows Redis is unreachable
		 * within about this long plus the timeout, without any request.
		 */
		private Duration heartbeatInterval = Duration.ofMillis(500);

		/**
		 * How often each instance checks Redis for live limit changes.
		 */
		private @Nullable Duration liveLimitsPollInterval;

		/**
		 * Rejections answered by this instance without a Redis call.
		 */
		private final LocalRejections localRejections = new LocalRejections();

		/**
		 * Concurrent decisions on one key sent to Redis together.
		 */
		private final Coalescing coalescing = new Coalescing();

		public LocalRejections getLocalRejections() {
			return this.localRejections;
		}

		public Coalescing getCoalescing() {
			return this.coalescing;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getConnectTimeout() {
			return this.connectTimeout;
		}

		public void setConnectTimeout(Duration connectTimeout) {
			this.connectTimeout = connectTimeout;
		}

		public TimeSourceType getTimeSource() {
			return this.timeSource;
		}

		public void setTimeSource(TimeSourceType timeSource) {
			this.timeSource = timeSource;
		}

		public Duration getHeartbeatInterval() {
			return this.heartbeatInterval;
		}

		public void setHeartbeatInterval(Duration heartbeatInterval) {
			this.heartbeatInterval = heartbeatInterval;
		}

		@Deprecated(since = "0.1.0")
		@DeprecatedConfigurationProperty(replacement = "ratelimit.redis.heartbeat-interval",
				reason = "Live limit changes are read with the heartbeat, which also carries resets and the instances alive")
		public @Nullable Duration getLiveLimitsPollInterval() {
			return this.liveLimitsPollInterval;
		}

		@Deprecated(since = "0.1.0")
		public void setLiveLimitsPollInterval(@Nullable Duration liveLimitsPollInterval) {
			this.liveLimitsPollInterval = liveLimitsPollInterval;
		}

	}

	/**
	 * Rejections answered by this instance without a Redis call: a request Redis has just
	 * rejected, asked again unchanged (same bucket, key, limits and cost), is rejected
	 * again locally until the retry-after Redis gave, or the max age, has passed. It
	 * never admits more than Redis would; a refund made on another instance keeps this
	 * one rejecting for at most the max age, a reset for at most the heartbeat interval.
	 */
	public static class LocalRejections {

		/**
		 * Whether to answer repeated rejections locally. Saves one Redis call per request
		 * of a client that keeps asking while rejected.
		 */
		private boolean enabled = true;

		/**
		 * Most keys with a rejection remembered at once; beyond it, new rejections are
		 * not remembered until old ones expire.
		 */
		private int maxKeys = 10_000;

		/**
		 * Longest a rejection is answered locally after Redis made it, however long its
		 * retry-after: permits given back on another instance (a refund) are honoured
		 * here within this long. Each key rejected without pause then costs one Redis
		 * call per this time.
		 */
		private Duration maxAge = Duration.ofMillis(500);

		public Duration getMaxAge() {
			return this.maxAge;
		}

		public void setMaxAge(Duration maxAge) {
			this.maxAge = maxAge;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(int maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

	/**
	 * Concurrent decisions on one key sent to Redis together: while a decision on a
	 * bucket, key and limits is on its way to Redis, the decisions on the same that
	 * arrive wait for it and then go as one script call, which decides each in order
	 * exactly as if it had been sent alone. A lone decision is sent at once.
	 */
	public static class Coalescing {

		/**
		 * Whether to send concurrent decisions on one key as one Redis call, and
		 * concurrent acquires and releases of concurrency limits as one call (on any keys
		 * on one Redis, per key on a Cluster). Saves Redis calls, and time, on keys many
		 * requests share (a global limit, a busy tenant); never changes a decision.
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/**
	 * The circuit breaker in front of the Redis store.
	 */
	public static class Breaker {

		/**
		 * How long Redis calls must keep failing (at least failure-rate-threshold percent
		 * of them, in every tenth of this time that saw calls) before the breaker opens
		 * and decisions stop trying Redis. Failures in a burst shorter than this leave it
		 * closed. Shorter stops paying the timeout sooner in an outage; longer rides out
		 * longer hiccups on Redis.
		 */
		private Duration window = Duration.ofSeconds(1);

		/**
		 * Share of failed calls, in percent, that counts as failing.
		 */
		private int failureRateThreshold = 50;

		/**
		 * How long an open breaker sends every decision to the failure mode before it
		 * tries Redis again.
		 */
		private Duration waitInOpenState = Duration.ofSeconds(1);

		/**
		 * How many decisions try Redis when the wait in open state is over; the breaker
		 * closes when all of them succeed.
		 */
		private int probes = 3;

		public Duration getWindow() {
			return this.window;
		}

		public void setWindow(Duration window) {
			this.window = window;
		}

		public int getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(int failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public Duration getWaitInOpenState() {
			return this.waitInOpenState;
		}

		public void setWaitInOpenState(Duration waitInOpenState) {
			this.waitInOpenState = waitInOpenState;
		}

		public int getProbes() {
			return this.probes;
		}

		public void setProbes(int probes) {
			this.probes = probes;
		}

	}

	/**
	 * What each instance enforces on its own while Redis fails (failure-mode fallback,
	 * and the count failure-mode open reports).
	 */
	public static class Fallback {

		/**
		 * How many instances share the limits. While Redis fails, each instance enforces
		 * every limit and burst divided by this number, rounded up, so that n instances
		 * admit about one limit together (at most n * ceil(limit / n)) instead of n times
		 * the limit. Traffic spread unevenly over the instances then gets less than the
		 * limit. Unset: the instances alive at the last heartbeat before Redis failed.
		 */
		private @Nullable Integer instances;

		/**
		 * Most keys whose last Redis decision each instance remembers: while Redis fails,
		 * such a key starts from what remained of it (divided among the instances) rather
		 * than from a full limit, and when Redis lost its data, what was used is written
		 * back.
		 */
		private int rememberedKeys = 100_000;

		public @Nullable Integer getInstances() {
			return this.instances;
		}

		public void setInstances(@Nullable Integer instances) {
			this.instances = instances;
		}

		public int getRememberedKeys() {
			return this.rememberedKeys;
		}

		public void setRememberedKeys(int rememberedKeys) {
			this.rememberedKeys = rememberedKeys;
		}

	}

	/**
	 * The in-memory store.
	 */
	public static class Memory {

		/**
		 * Most keys held at once; beyond it, the least used keys are evicted, so rotating
		 * keys cannot exhaust the heap.
		 */
		private long maxKeys = 1_000_000L;

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

	/**
	 * A concurrency limit: at most this many calls in flight per key, across every
	 * instance that shares the store.
	 */
	public static class Concurrency {

		/**
		 * Calls a key may have in flight at once.
		 */
		private @Nullable Integer permits;

		/**
		 * How long a permit is held without a renewal: a permit whose instance crashed or
		 * froze comes back after it. Held permits are renewed every third of it. 1s to
		 * 1d; a number without a unit is seconds.
		 */
		@DurationUnit(ChronoUnit.SECONDS)
		private @Nullable Duration lease;

		public @Nullable Integer getPermits() {
			return this.permits;
		}

		public void setPermits(@Nullable Integer permits) {
			this.permits = permits;
		}

		public @Nullable Duration getLease() {
			return this.lease;
		}

		public void setLease(@Nullable Duration lease) {
			this.lease = lease;
		}

	}

}
