package io.github.ratelimit.web;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;

import io.github.ratelimit.Durations;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.bucket.KeyState;
import io.github.ratelimit.bucket.KeyStateReader;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.web.Policies.Policy;

/**
 * The status endpoint's answer, the same on every request stack: the calling client's
 * state under each filter rule, read without taking a permit. Each rule's key is
 * evaluated on the status request itself, as the rule would key a request of that client,
 * so a client only ever sees its own keys (and the state of rules without a key, which
 * every client shares); nothing in the request names a key.
 * <p>
 * Listed are the rules that can limit the client: every rule, or with a {@code path} (and
 * {@code method}, {@code GET} unless given) the rules that would apply to such a request
 * under {@code ratelimit.filter.match}. Left out are rules of buckets in shadow mode
 * (they reject nobody, and the limit headers leave them out too) and rules whose key is
 * {@code null} for this request (e.g. a missing API key header: such a request is not
 * limited by the rule, or refused with 400). {@code @RateLimited} methods are not listed:
 * their keys come from method arguments, which a status request does not have.
 * <p>
 * The state is read through the {@link KeyStateReader} the actuator endpoint reads keys
 * with. While the store fails, the failure mode applies: under {@code closed} the answer
 * is the same 503 a limited request gets; otherwise the state is the per-instance
 * fallback's, and the answer says {@code "degraded": true}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitStatus {

	/** The media type of a state answer. */
	public static final String CONTENT_TYPE = "application/json";

	/**
	 * The {@code Cache-Control} of every answer: it is one client's state at one moment,
	 * which no cache may keep or hand to another client.
	 */
	public static final String CACHE_CONTROL = "no-store";

	private static final int OK = 200;

	private final FilterRules rules;

	private final KeyStateReader keys;

	private final FailureMode failureMode;

	/**
	 * Creates the status.
	 * @param rules the rules the filter limits requests by
	 * @param keys reads a key's state without taking a permit
	 * @param failureMode what applies while the store fails
	 */
	public RateLimitStatus(FilterRules rules, KeyStateReader keys, FailureMode failureMode) {
		this.rules = Objects.requireNonNull(rules, "'rules' must not be null");
		this.keys = Objects.requireNonNull(keys, "'keys' must not be null");
		this.failureMode = Objects.requireNonNull(failureMode, "'failureMode' must not be null");
	}

	/**
	 * Answers a status request.
	 * @param request the request object the rules were built for
	 * @param method the {@code method} parameter, or {@code null}
	 * @param path the {@code path} parameter, or {@code null} to list every rule
	 * @param instance the request path, for the {@code instance} of a problem body
	 * @return the answer
	 * @throws IllegalStateException when a key expression fails, as it would in the
	 * filter
	 */
	public Answer answer(Object request, @Nullable String method, @Nullable String path, String instance) {
		List<FilterRule> rules = (path != null)
				? this.rules.matching((method != null) ? method.trim().toUpperCase(Locale.ROOT) : "GET",
						PathContainer.parsePath(path.startsWith("/") ? path : "/" + path))
				: this.rules.rules();
		StringBuilder json = new StringBuilder(128 + 256 * rules.size()).append("{\"limits\":[");
		boolean degraded = false;
		boolean first = true;
		for (FilterRule rule : rules) {
			Bucket bucket = rule.bucket();
			if (bucket == null) {
				// A rule that only limits requests in flight has no rate limit to show.
				continue;
			}
			String key = (bucket.mode() != LimitMode.SHADOW) ? rule.key(request) : null;
			if (key == null) {
				continue;
			}
			KeyState state;
			try {
				state = this.keys.read(bucket.name(), key, bucket.limits());
			}
			catch (RateLimitStoreException ex) {
				return unavailable(instance);
			}
			if (state.fromFallback()) {
				if (this.failureMode == FailureMode.CLOSED) {
					return unavailable(instance);
				}
				degraded = true;
			}
			if (!first) {
				json.append(',');
			}
			first = false;
			entry(json, rule, bucket, key, state);
		}
		json.append("],\"degraded\":").append(degraded).append('}');
		return new Answer(OK, null, CONTENT_TYPE, json.toString());
	}

	private static void entry(StringBuilder json, FilterRule rule, Bucket bucket, String key, KeyState state) {
		List<Policy> policies = Policies.of(bucket.name(), state.decision());
		List<KeyState.LimitState> limits = state.limits();
		int binding = 0;
		for (int i = 1; i < limits.size(); i++) {
			if (limits.get(i).remaining() < limits.get(binding).remaining()) {
				binding = i;
			}
		}
		json.append("{\"bucket\":");
		ProblemJson.quote(json, bucket.name());
		json.append(",\"paths\":");
		strings(json, rule.paths());
		json.append(",\"methods\":");
		strings(json, rule.methods());
		json.append(",\"shared\":").append(key.isEmpty());
		json.append(",\"limit\":").append(limits.get(binding).spec().limit());
		json.append(",\"window\":");
		ProblemJson.quote(json, Durations.format(limits.get(binding).spec().window()));
		json.append(",\"remaining\":").append(state.remaining());
		json.append(",\"resetAfterMillis\":").append(state.resetAfterMillis());
		json.append(",\"retryAfterMillis\":").append(state.retryAfterMillis());
		json.append(",\"policies\":[");
		for (int i = 0; i < limits.size(); i++) {
			KeyState.LimitState limit = limits.get(i);
			LimitSpec spec = limit.spec();
			json.append((i > 0) ? ",{\"name\":" : "{\"name\":");
			ProblemJson.quote(json, policies.get(i).name());
			json.append(",\"algorithm\":");
			ProblemJson.quote(json, spec.algorithm().propertyValue());
			json.append(",\"limit\":").append(spec.limit());
			json.append(",\"window\":");
			ProblemJson.quote(json, Durations.format(spec.window()));
			if (spec.algorithm().usesBurst()) {
				json.append(",\"burst\":").append(spec.burst());
			}
			if (!spec.penalty().isZero()) {
				json.append(",\"penalty\":");
				ProblemJson.quote(json, Durations.format(spec.penalty()));
			}
			json.append(",\"remaining\":").append(limit.remaining());
			json.append(",\"resetAfterMillis\":").append(limit.resetAfterMillis());
			json.append(",\"retryAfterMillis\":").append(limit.retryAfterMillis());
			json.append('}');
		}
		json.append("]}");
	}

	private static void strings(StringBuilder json, List<String> values) {
		json.append('[');
		for (int i = 0; i < values.size(); i++) {
			if (i > 0) {
				json.append(',');
			}
			ProblemJson.quote(json, values.get(i));
		}
		json.append(']');
	}

	private static Answer unavailable(String instance) {
		RateLimitProblem problem = RateLimitProblem.unavailable(instance);
		return new Answer(problem.status(), problem.retryAfter(), RateLimitProblem.CONTENT_TYPE, problem.body());
	}

	/**
	 * An answer, ready to write on any request stack; every answer also carries
	 * {@code Cache-Control: }{@value #CACHE_CONTROL}.
	 *
	 * @param status the HTTP status: 200, or 503 while the store fails under
	 * {@code ratelimit.failure-mode=closed}
	 * @param retryAfter the {@code Retry-After} value, or {@code null} for none
	 * @param contentType the media type of the body
	 * @param body the body
	 */
	public record Answer(int status, @Nullable String retryAfter, String contentType, String body) {
	}

}
