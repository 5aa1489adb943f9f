package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.web.Policies.Policy;
import io.github.ratelimit.web.ResponseLimits.Entry;

/**
 * Works out the rate limit headers of every decision made for a request, whoever made it
 * (a filter rule, a {@code @RateLimited} method, the 429 of an exception resolver).
 * Independent of the request stack: decisions are collected in the request's
 * {@link ResponseLimits}, and the header fields are handed to a setter of the response.
 * <p>
 * The headers are rewritten from the whole collection each time, so that:
 * <ul>
 * <li>each decision is one list member, and decisions of several rules or of a rule and
 * an annotation never overwrite each other;</li>
 * <li>a decision reported twice (by the filter itself and by the observer, or by the
 * observer and again by the exception resolver) is still one member;</li>
 * <li>a later decision for the same bucket and key replaces the earlier one, since both
 * describe the same counter and the later state is the current one (a method called in a
 * loop does not grow the header without bound);</li>
 * <li>the legacy headers describe the most restrictive limit of the whole request.</li>
 * </ul>
 * Draft headers follow the IETF draft "RateLimit header fields for HTTP",
 * draft-ietf-httpapi-ratelimit-headers-10 (27 September 2025): two structured-field lists
 * with one member per limit, e.g. {@code RateLimit-Policy: "api";q=100;w=60} and
 * {@code RateLimit: "api";r=42;t=17}. Buckets in shadow mode are not advertised: they are
 * being tried, and clients must not slow down for a limit that is not enforced.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitHeaders {

	/** The draft's policy field: quota and window of each limit. */
	public static final String POLICY = "RateLimit-Policy";

	/** The draft's state field: remaining quota and seconds until reset of each limit. */
	public static final String RATE_LIMIT = "RateLimit";

	/** Legacy: the limit of the most restrictive policy. */
	public static final String LEGACY_LIMIT = "X-RateLimit-Limit";

	/** Legacy: the remaining permits of the most restrictive policy. */
	public static final String LEGACY_REMAINING = "X-RateLimit-Remaining";

	/** Legacy: seconds until the most restrictive policy is fully restored. */
	public static final String LEGACY_RESET = "X-RateLimit-Reset";

	/**
	 * Most decisions advertised per request: distinct keys decided in a loop must not
	 * grow a header past what servers and proxies accept.
	 */
	public static final int MAX_DECISIONS = 16;

	/**
	 * The quota unit of a concurrency limit's policy: its quota counts requests in
	 * flight, not requests per window.
	 */
	private static final String CONCURRENT_REQUESTS = ";qu=\"concurrent-requests\"";

	/**
	 * The name under which a request stack keeps a request's {@link ResponseLimits} (a
	 * servlet request attribute, an exchange attribute).
	 */
	public static final String ATTRIBUTE = RateLimitHeaders.class.getName() + ".decisions";

	private final HeadersMode mode;

	/**
	 * Creates the header writer.
	 * @param mode which headers to write
	 */
	public RateLimitHeaders(HeadersMode mode) {
		this.mode = Objects.requireNonNull(mode, "'mode' must not be null");
	}

	/**
	 * Returns which headers are written.
	 * @return the mode
	 */
	public HeadersMode mode() {
		return this.mode;
	}

	/**
	 * Adds a decision to a response's limits and sets the header fields when they change.
	 * Does nothing for shadow buckets, whose limit is not enforced.
	 * @param limits the decisions of the response so far
	 * @param result the decision
	 * @param setHeader sets a header field of the response, replacing any earlier value
	 */
	public void add(ResponseLimits limits, RateLimitResult result, BiConsumer<String, String> setHeader) {
		if (result.bucket().mode() == LimitMode.SHADOW) {
			return;
		}
		update(limits, result.bucket().name(), result.key(), result.decision(), setHeader);
	}

	/**
	 * Adds a concurrency permit a request holds: its policy counts requests in flight
	 * ({@code qu="concurrent-requests"}), without a window.
	 * @param limits the decisions of the response so far
	 * @param permit the permit, taken
	 * @param setHeader sets a header field of the response, replacing any earlier value
	 */
	public void addInFlight(ResponseLimits limits, ConcurrencyPermit permit, BiConsumer<String, String> setHeader) {
		update(limits, permit.bucket(), permit.key(), permit.decision().asDecision(), setHeader);
	}

	/**
	 * Adds a rejection known only by its bucket and decision (from a
	 * {@link io.github.ratelimit.RateLimitExceededException}), unless the response
	 * already has it: the same decision, or a rejection of the same bucket, reported
	 * through {@link #add}.
	 * @param limits the decisions of the response so far
	 * @param bucket the bucket that rejected
	 * @param decision the rejecting decision
	 * @param setHeader sets a header field of the response, replacing any earlier value
	 */
	public void addRejection(ResponseLimits limits, String bucket, Decision decision,
			BiConsumer<String, String> setHeader) {
		update(limits, bucket, null, decision, setHeader);
	}

	/**
	 * Returns the policy name of a bucket's concurrency limit:
	 * {@code <bucket>-concurrency} when the bucket limits the same requests' rate too, so
	 * that a client tells the two apart (also on a refusal, where only one of them is in
	 * the response), else the bucket's name.
	 * @param bucket the bucket
	 * @param alsoRateLimited whether the bucket's rate limit applies to the request too
	 * @return the policy name
	 */
	public static String concurrencyPolicy(String bucket, boolean alsoRateLimited) {
		return ConcurrencyLimitExceededException.policyName(bucket, alsoRateLimited);
	}

	/**
	 * Returns the {@code Retry-After} of a rejecting decision in whole seconds: rounded
	 * up, so that a client that waits that long is never early, and at least 1.
	 * @param decision the rejecting decision
	 * @return the seconds, or {@code -1} when retrying cannot help (the call costs more
	 * than the limit allows at once)
	 */
	public static long retryAfterSeconds(Decision decision) {
		return decision.retryable() ? Math.max(1, Policies.ceilSeconds(decision.retryAfterMicros())) : -1;
	}

	private void update(ResponseLimits limits, String bucket, @Nullable String key, Decision decision,
			BiConsumer<String, String> setHeader) {
		if (this.mode == HeadersMode.NONE) {
			return;
		}
		List<Entry> entries = limits.merge(bucket, key, decision);
		if (entries != null) {
			write(entries, setHeader);
		}
	}

	private void write(List<Entry> entries, BiConsumer<String, String> setHeader) {
		List<Policy> policies;
		if (entries.size() == 1) {
			policies = Policies.of(entries.get(0).bucket(), entries.get(0).decision());
		}
		else {
			policies = new ArrayList<>();
			for (Entry entry : entries) {
				policies.addAll(Policies.of(entry.bucket(), entry.decision()));
			}
			policies = Policies.withConcurrencyApart(policies);
		}
		if (policies.isEmpty()) {
			return;
		}
		if (this.mode.draft()) {
			writeDraft(policies, setHeader);
		}
		if (this.mode.legacy()) {
			writeLegacy(policies, setHeader);
		}
	}

	/**
	 * Writes both draft fields with one builder each: this runs for every limited
	 * request, so it avoids the sets, joins and concatenations of a plainer version.
	 */
	private static void writeDraft(List<Policy> policies, BiConsumer<String, String> setHeader) {
		StringBuilder quotas = new StringBuilder(40 * policies.size());
		StringBuilder states = new StringBuilder(40 * policies.size());
		for (int i = 0; i < policies.size(); i++) {
			Policy policy = policies.get(i);
			Decision decision = policy.decision();
			// The same policy decided for two keys is one quota policy, but two states.
			if (!quotaListedBefore(policies, i)) {
				appendSfString(separate(quotas), policy.name()).append(";q=").append(decision.limit());
				Long window = policy.windowSeconds();
				if (window != null) {
					quotas.append(";w=").append(window.longValue());
				}
				else if (decision.isConcurrency()) {
					quotas.append(CONCURRENT_REQUESTS);
				}
			}
			appendSfString(separate(states), policy.name()).append(";r=").append(decision.remaining());
			// A count of calls in flight has no window within which it holds.
			if (!decision.isConcurrency()) {
				states.append(";t=").append(policy.resetSeconds());
			}
		}
		setHeader.accept(POLICY, quotas.toString());
		setHeader.accept(RATE_LIMIT, states.toString());
	}

	/**
	 * Returns whether a policy before {@code index} has the same quota member (name,
	 * quota and window) as the one at {@code index}.
	 */
	private static boolean quotaListedBefore(List<Policy> policies, int index) {
		Policy policy = policies.get(index);
		for (int i = 0; i < index; i++) {
			Policy earlier = policies.get(i);
			if (earlier.name().equals(policy.name()) && earlier.decision().limit() == policy.decision().limit()
					&& Objects.equals(earlier.windowSeconds(), policy.windowSeconds())) {
				return true;
			}
		}
		return false;
	}

	private static StringBuilder separate(StringBuilder members) {
		return (members.length() > 0) ? members.append(", ") : members;
	}

	private static void writeLegacy(List<Policy> policies, BiConsumer<String, String> setHeader) {
		Policy binding = policies.get(0);
		for (Policy policy : policies) {
			if (moreRestrictive(policy.decision(), binding.decision())) {
				binding = policy;
			}
		}
		setHeader.accept(LEGACY_LIMIT, String.valueOf(binding.decision().limit()));
		setHeader.accept(LEGACY_REMAINING, String.valueOf(binding.decision().remaining()));
		setHeader.accept(LEGACY_RESET, String.valueOf(binding.resetSeconds()));
	}

	/**
	 * A rejecting limit beats an allowing one, the longer wait beats the shorter, and
	 * among allowing limits the one with the fewest permits left is what the client must
	 * respect.
	 */
	private static boolean moreRestrictive(Decision candidate, Decision current) {
		if (candidate.allowed() != current.allowed()) {
			return !candidate.allowed();
		}
		if (!candidate.allowed()) {
			return candidate.retryAfterMicros() > current.retryAfterMicros();
		}
		if (candidate.remaining() != current.remaining()) {
			return candidate.remaining() < current.remaining();
		}
		return candidate.resetAfterMicros() > current.resetAfterMicros();
	}

	/**
	 * Appends a structured-field string (RFC 9651 section 4.1.6); the name is already
	 * printable ASCII.
	 */
	private static StringBuilder appendSfString(StringBuilder result, String value) {
		result.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				result.append('\\');
			}
			result.append(c);
		}
		return result.append('"');
	}

}
