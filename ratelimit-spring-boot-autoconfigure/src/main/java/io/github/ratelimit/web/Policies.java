package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Durations;
import io.github.ratelimit.LimitSpec;

/**
 * The quota policies of one decision, one per limit, named as headers and problem bodies
 * show them: the bucket name when the bucket has one limit, {@code <bucket>-<window>}
 * (e.g. {@code api-1s}, {@code api-1h}) when it has several. Headers and the 429 body
 * both name policies through here, so {@code violated-policies} always matches the
 * {@code RateLimit-Policy} members.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Policies {

	private static final long MICROS_PER_SECOND = 1_000_000L;

	private Policies() {
	}

	/**
	 * Returns one policy per limit of the decision, in the order of the limits.
	 * @param bucket the bucket name
	 * @param decision the (possibly combined) decision
	 * @return the policies
	 */
	static List<Policy> of(String bucket, Decision decision) {
		List<Decision> limits = decision.limits();
		String base = printable(bucket);
		if (limits.size() == 1) {
			return List.of(new Policy(base, limits.get(0)));
		}
		List<Policy> policies = new ArrayList<>(limits.size());
		Set<String> used = new HashSet<>();
		for (int i = 0; i < limits.size(); i++) {
			Decision limit = limits.get(i);
			LimitSpec spec = limit.spec();
			String name = base + "-" + ((spec != null) ? Durations.format(spec.window()) : String.valueOf(i + 1));
			// Two limits with the same window (e.g. a token bucket and a fixed window)
			// still need distinct names.
			if (!used.add(name)) {
				name = name + "-" + (i + 1);
				used.add(name);
			}
			policies.add(new Policy(name, limit));
		}
		return policies;
	}

	/**
	 * Renames each concurrency limit's policy ({@code <bucket>-concurrency}) whose name a
	 * rate limit's policy of the same response has: a request limited by a bucket's rate
	 * and by its concurrency advertises two policies, which a client must tell apart.
	 * @param policies the policies of one response
	 * @return the policies, renamed where needed
	 */
	static List<Policy> withConcurrencyApart(List<Policy> policies) {
		List<Policy> result = null;
		for (int i = 0; i < policies.size(); i++) {
			Policy policy = policies.get(i);
			if (policy.decision().isConcurrency() && hasRatePolicy(policies, policy.name())) {
				if (result == null) {
					result = new ArrayList<>(policies);
				}
				result.set(i, new Policy(RateLimitHeaders.concurrencyPolicy(policy.name(), true), policy.decision()));
			}
		}
		return (result != null) ? result : policies;
	}

	private static boolean hasRatePolicy(List<Policy> policies, String name) {
		for (Policy policy : policies) {
			if (!policy.decision().isConcurrency() && policy.name().equals(name)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whole seconds, rounded up, so a client that waits that long is never early.
	 * @param micros a duration in microseconds
	 * @return the seconds
	 */
	static long ceilSeconds(long micros) {
		if (micros <= 0) {
			return 0;
		}
		return (micros / MICROS_PER_SECOND) + ((micros % MICROS_PER_SECOND != 0) ? 1 : 0);
	}

	/**
	 * Keeps a name within what a structured-field string may hold (printable ASCII), so a
	 * bucket name can never break a header.
	 */
	private static String printable(String name) {
		if (isPrintable(name)) {
			// Every limited request names its policies: no copy when there is nothing to
			// replace.
			return name;
		}
		StringBuilder result = new StringBuilder(name.length());
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			result.append((c >= 0x20 && c <= 0x7e) ? c : '_');
		}
		return result.toString();
	}

	private static boolean isPrintable(String name) {
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (c < 0x20 || c > 0x7e) {
				return false;
			}
		}
		return true;
	}

	/**
	 * One limit of a decision under its policy name.
	 *
	 * @param name the policy name, printable ASCII
	 * @param decision the decision of this one limit
	 */
	record Policy(String name, Decision decision) {

		/**
		 * Returns the window in whole seconds, rounded up, or {@code null} when unknown.
		 * @return the window seconds
		 */
		@Nullable Long windowSeconds() {
			LimitSpec spec = this.decision.spec();
			return (spec != null) ? Math.max(1, ceilSeconds(spec.windowMicros())) : null;
		}

		/**
		 * Returns the seconds until the limit is fully restored, rounded up.
		 * @return the reset seconds
		 */
		long resetSeconds() {
			return ceilSeconds(this.decision.resetAfterMicros());
		}

	}

}
