package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.expression.NullKeyPolicy;

/**
 * The {@code ratelimit.filter.rules}, and what they ask of one request: with
 * {@link MatchMode#FIRST} the first matching rule applies, with {@link MatchMode#ALL}
 * every matching rule does. Independent of the request stack: a filter passes the request
 * object, its method and its path.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class FilterRules {

	private final List<FilterRule> rules;

	private final MatchMode match;

	private final boolean pathsNeeded;

	/**
	 * Creates the rules.
	 * @param rules the rules, in the order they are tried
	 * @param match whether the first or every matching rule applies
	 */
	public FilterRules(List<FilterRule> rules, MatchMode match) {
		this.rules = List.copyOf(rules);
		this.match = Objects.requireNonNull(match, "'match' must not be null");
		this.pathsNeeded = this.rules.stream().anyMatch(FilterRule::hasPaths);
	}

	/**
	 * Returns the rules, in the order they are tried.
	 * @return the rules
	 */
	public List<FilterRule> rules() {
		return this.rules;
	}

	/**
	 * Returns whether some rule looks at the path, so that a filter computes the path
	 * only when needed.
	 * @return {@code true} when {@link #plan} needs the path
	 */
	public boolean needsPath() {
		return this.pathsNeeded;
	}

	/**
	 * Works out what a request asks of the buckets of the rules that match it, in rule
	 * order. A rule whose key is {@code null} is left out under
	 * {@link NullKeyPolicy#SKIP}, and ends planning under {@link NullKeyPolicy#ERROR}:
	 * the client sent a request it cannot be limited by.
	 * @param request the request object, of the type the rules were built for
	 * @param method the HTTP method
	 * @param path the path within the application, or {@code null} when
	 * {@link #needsPath()} is {@code false}
	 * @return the plan
	 * @throws IllegalStateException when a key or cost expression fails
	 */
	public Plan plan(Object request, String method, @Nullable PathContainer path) {
		List<PermitRequest> requests = null;
		List<FilterRule> planned = new ArrayList<>(0);
		List<InFlightPermits.Claim> inFlight = List.of();
		for (FilterRule rule : this.rules) {
			if (!rule.matches(method, path)) {
				continue;
			}
			String key = rule.key(request);
			if (key == null) {
				if (rule.nullKeyPolicy() == NullKeyPolicy.SKIP) {
					if (this.match == MatchMode.FIRST) {
						break;
					}
					continue;
				}
				return new Plan(List.of(), List.of(), List.of(), rule);
			}
			Bucket bucket = rule.bucket();
			ConcurrencyLimiter concurrency = rule.concurrency();
			if (this.match == MatchMode.FIRST) {
				return new Plan(
						(bucket != null) ? List.of(PermitRequest.of(bucket, key, rule.cost(request))) : List.of(),
						(bucket != null) ? List.of(rule) : List.of(),
						(concurrency != null) ? List.of(new InFlightPermits.Claim(concurrency, key)) : List.of(), null);
			}
			if (bucket != null) {
				if (requests == null) {
					requests = new ArrayList<>(this.rules.size());
				}
				requests.add(PermitRequest.of(bucket, key, rule.cost(request)));
				planned.add(rule);
			}
			if (concurrency != null) {
				if (inFlight.isEmpty()) {
					inFlight = new ArrayList<>(2);
				}
				inFlight.add(new InFlightPermits.Claim(concurrency, key));
			}
		}
		return new Plan((requests != null) ? requests : List.of(), planned, inFlight, null);
	}

	/**
	 * Settles, once its response is complete, what a request took under rules with a
	 * {@code settle}: each such rule's reservation with what the response says was used
	 * ({@link ResponseSettlement#settle}; one store call per rule at most).
	 * @param plan the request's plan
	 * @param acquisition the permits it took, granted
	 * @param status the response's status code
	 * @param headers the response's headers: a name's first value, or {@code null}
	 * @param acquirer settles through the store
	 */
	public static void settle(Plan plan, Acquisition acquisition, int status,
			Function<String, @Nullable String> headers, Acquirer acquirer) {
		for (int i = 0; i < plan.rules().size(); i++) {
			ResponseSettlement settlement = plan.rules().get(i).settlement();
			if (settlement != null) {
				settlement.settle(acquisition.results().get(i), status, headers, acquirer);
			}
		}
	}

	/**
	 * Returns the rules that apply to a request of a method and path, without evaluating
	 * anything of a request: with {@link MatchMode#FIRST} the first matching rule, with
	 * {@link MatchMode#ALL} every matching one.
	 * @param method the HTTP method
	 * @param path the path within the application
	 * @return the rules, in rule order; empty when no rule matches
	 */
	public List<FilterRule> matching(String method, PathContainer path) {
		List<FilterRule> matching = new ArrayList<>();
		for (FilterRule rule : this.rules) {
			if (rule.matches(method, path)) {
				matching.add(rule);
				if (this.match == MatchMode.FIRST) {
					break;
				}
			}
		}
		return matching;
	}

	/**
	 * What one request asks for.
	 *
	 * @param requests the permits to take, one request per matching rule, in rule order;
	 * empty when no rule limits the request
	 * @param rules the rule of each request, in the same order
	 * @param inFlight the concurrency limits that apply, in rule order, each with the
	 * request's key
	 * @param missingKey the rule whose key was {@code null} under
	 * {@link NullKeyPolicy#ERROR}, or {@code null}
	 */
	public record Plan(List<PermitRequest> requests, List<FilterRule> rules, List<InFlightPermits.Claim> inFlight,
			@Nullable FilterRule missingKey) {

		/**
		 * Returns whether no rule limits the request.
		 * @return {@code true} when there is nothing to take
		 */
		public boolean isEmpty() {
			return this.requests.isEmpty() && this.inFlight.isEmpty();
		}

		/**
		 * Returns whether the request's one rate limit and one concurrency limit are one
		 * bucket's, keyed alike: decided in one store call
		 * ({@link InFlightPermits#acquire(InFlightPermits.Claim, PermitRequest, Acquirer)}).
		 * @return {@code true} when one rule with both limits applies
		 */
		public boolean decidesBothAtOnce() {
			if (this.requests.size() != 1 || this.inFlight.size() != 1) {
				return false;
			}
			PermitRequest request = this.requests.get(0);
			InFlightPermits.Claim claim = this.inFlight.get(0);
			return claim.limiter().bucket().equals(request.bucket().name()) && claim.key().equals(request.key());
		}

		/**
		 * Returns the policy name of a concurrency limit's refusal: the bucket's, or
		 * {@code <bucket>-concurrency} when a rate limit of the same bucket applies too.
		 * @param bucket the concurrency limit's bucket
		 * @return the policy name
		 * @see RateLimitHeaders#concurrencyPolicy(String, boolean)
		 */
		public String concurrencyPolicy(String bucket) {
			boolean alsoRateLimited = false;
			for (PermitRequest request : this.requests) {
				alsoRateLimited |= request.bucket().name().equals(bucket);
			}
			return RateLimitHeaders.concurrencyPolicy(bucket, alsoRateLimited);
		}

		/**
		 * Returns whether a rule of the plan settles from the response.
		 * @return {@code true} when the response must be read once complete
		 */
		public boolean settles() {
			for (FilterRule rule : this.rules) {
				if (rule.settlement() != null) {
					return true;
				}
			}
			return false;
		}

	}

}
