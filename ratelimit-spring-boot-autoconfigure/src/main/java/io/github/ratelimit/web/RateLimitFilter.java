package io.github.ratelimit.web;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ServletRequestPathUtils;

import io.github.ratelimit.spring.NullKeyPolicy;
import io.github.ratelimit.spring.RateLimitResult;
import io.github.ratelimit.spring.RateLimitService;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreUnavailableException;

/**
 * Limits requests by the {@code ratelimit.filter.rules}: with {@link MatchMode#FIRST} the
 * first matching rule applies, with {@link MatchMode#ALL} every matching rule does, and a
 * request passes only if all of them allow it (permits taken by the rules before a
 * rejecting one are given back, except for leaky buckets, whose slot is already
 * scheduled).
 * <p>
 * A rejected request gets a 429 from {@link RateLimitResponses} and never reaches the
 * rest of the chain. An allowed leaky bucket decision waits its delay before the chain
 * continues, so requests leave smoothly. Buckets in shadow mode never reject. Every
 * decision adds its limit headers to the response, allowed or not.
 * <p>
 * A rule whose key evaluates to {@code null} (e.g. a missing API key header) lets the
 * request through unlimited with {@link NullKeyPolicy#SKIP}; with
 * {@link NullKeyPolicy#ERROR} it is answered with 400 Bad Request, since the client sent
 * a request it cannot be limited by: letting it through would let a client escape the
 * limit by leaving the header out, and a 500 would report a server fault. The first such
 * request of each rule is logged at WARN.
 * <p>
 * Async and error dispatches are not limited again ({@link OncePerRequestFilter}'s
 * defaults), so one request is counted once.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitFilter extends OncePerRequestFilter {

	private static final Log ruleLogger = LogFactory.getLog(RateLimitFilter.class);

	private final List<FilterRule> rules;

	private final MatchMode match;

	private final RateLimitService service;

	private final RateLimitResponses responses;

	private final boolean pathsNeeded;

	/**
	 * Creates the filter.
	 * @param rules the rules, in the order they are tried
	 * @param match whether the first or every matching rule applies
	 * @param service makes, counts and reports the decisions
	 * @param responses writes 429 and 400 responses and the limit headers
	 */
	public RateLimitFilter(List<FilterRule> rules, MatchMode match, RateLimitService service,
			RateLimitResponses responses) {
		this.rules = List.copyOf(rules);
		this.match = Objects.requireNonNull(match, "'match' must not be null");
		this.service = Objects.requireNonNull(service, "'service' must not be null");
		this.responses = Objects.requireNonNull(responses, "'responses' must not be null");
		this.pathsNeeded = this.rules.stream().anyMatch(FilterRule::hasPaths);
	}

	/**
	 * Returns the rules, in the order they are tried.
	 * @return the rules
	 */
	public List<FilterRule> getRules() {
		return this.rules;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return this.rules.isEmpty();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		List<FilterRule> matching = matchingRules(request);
		// Permits to give back exist only when a rule follows the one that took them.
		@Nullable List<Taken> taken = (matching.size() > 1) ? new ArrayList<>(matching.size()) : null;
		long delayMicros = 0;
		try {
			for (FilterRule rule : matching) {
				@Nullable String key = rule.key(request);
				if (key == null) {
					if (rule.nullKeyPolicy() == NullKeyPolicy.SKIP) {
						continue;
					}
					reportNullKey(rule, request);
					refund(taken);
					this.responses.writeMissingKey(request, response);
					return;
				}
				long cost = rule.cost(request);
				RateLimitResult result = this.service.decide(rule.bucket(), key, rule.bucket().limits(), cost,
						RateLimitStore.NO_MAX_DELAY);
				this.responses.headers().add(request, response, result);
				if (!result.proceeds()) {
					refund(taken);
					this.responses.writeRejection(request, response, result.bucket().name(), result.decision());
					return;
				}
				if (result.decision().allowed()) {
					if (taken != null) {
						taken.add(new Taken(result, cost));
					}
					// Leaky bucket slots of several rules run concurrently: wait for the
					// latest.
					delayMicros = Math.max(delayMicros, result.decision().delayMicros());
				}
			}
		}
		catch (StoreUnavailableException ex) {
			refund(taken);
			this.responses.writeUnavailable(request, response);
			return;
		}
		catch (RuntimeException ex) {
			refund(taken);
			throw ex;
		}
		if (delayMicros > 0) {
			sleep(delayMicros);
		}
		chain.doFilter(request, response);
	}

	private List<FilterRule> matchingRules(HttpServletRequest request) {
		@Nullable PathContainer path = this.pathsNeeded ? path(request) : null;
		String method = request.getMethod();
		if (this.match == MatchMode.FIRST) {
			for (FilterRule rule : this.rules) {
				if (rule.matches(method, path)) {
					return List.of(rule);
				}
			}
			return List.of();
		}
		List<FilterRule> matching = new ArrayList<>(this.rules.size());
		for (FilterRule rule : this.rules) {
			if (rule.matches(method, path)) {
				matching.add(rule);
			}
		}
		return matching;
	}

	/**
	 * Returns the path within the application, computed the way Spring MVC computes it
	 * for its own {@code PathPattern} matching, so that a rule and a handler mapping see
	 * the same path.
	 */
	private static PathContainer path(HttpServletRequest request) {
		return (ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request) : ServletRequestPathUtils.parse(request))
			.pathWithinApplication();
	}

	/**
	 * Gives back what earlier rules took for a request that is not going to proceed; the
	 * store keeps leaky bucket slots, which are already scheduled.
	 */
	private void refund(@Nullable List<Taken> taken) {
		if (taken == null) {
			return;
		}
		for (Taken permits : taken) {
			RateLimitResult result = permits.result();
			try {
				this.service.refund(result.bucket(), result.key(), result.limits(), permits.cost());
			}
			catch (RuntimeException ex) {
				this.logger.warn("Could not give back permits of bucket '" + result.bucket().name() + "'", ex);
			}
		}
		taken.clear();
	}

	private void sleep(long delayMicros) throws ServletException {
		try {
			Thread.sleep(delayMicros / 1000L, (int) (delayMicros % 1000L) * 1000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ServletException("Interrupted while waiting " + delayMicros + "us for a leaky bucket slot", ex);
		}
	}

	private static void reportNullKey(FilterRule rule, HttpServletRequest request) {
		if (rule.firstNullKey()) {
			ruleLogger.warn(rule.name() + ".key '" + rule.keyExpression() + "' evaluated to null for "
					+ request.getMethod() + " " + request.getRequestURI()
					+ "; such requests are answered with 400 Bad Request. Set ratelimit.null-key=skip to let them "
					+ "through unlimited. (Logged once per rule.)");
		}
		else if (ruleLogger.isDebugEnabled()) {
			ruleLogger.debug(
					rule.name() + ".key evaluated to null for " + request.getMethod() + " " + request.getRequestURI());
		}
	}

	/**
	 * Permits a rule took for the current request, to give back if a later rule rejects.
	 */
	private record Taken(RateLimitResult result, long cost) {
	}

}
