package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ServletRequestPathUtils;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.MatchMode;

/**
 * Limits requests by the {@code ratelimit.filter.rules}: with {@link MatchMode#FIRST} the
 * first matching rule applies, with {@link MatchMode#ALL} every matching rule does, and a
 * request passes only if all of them allow it. The permits are taken through the
 * {@link Acquirer}, like those of {@code @RateLimited}: permits taken by the rules before
 * a rejecting one are given back (except leaky bucket slots), and an allowed leaky bucket
 * decision waits its delay before the chain continues, so requests leave smoothly.
 * <p>
 * A rejected request gets a 429 from {@link RateLimitResponses} and never reaches the
 * rest of the chain. Buckets in shadow mode never reject. Every decision adds its limit
 * headers to the response, allowed or not.
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

	private final FilterRules rules;

	private final Acquirer acquirer;

	private final RateLimitResponses responses;

	/**
	 * Creates the filter.
	 * @param rules the rules, built for {@link HttpServletRequest}
	 * @param acquirer takes the permits, waits and reports the decisions
	 * @param responses writes 429, 400 and 503 responses and the limit headers
	 */
	public RateLimitFilter(FilterRules rules, Acquirer acquirer, RateLimitResponses responses) {
		this.rules = Objects.requireNonNull(rules, "'rules' must not be null");
		this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
		this.responses = Objects.requireNonNull(responses, "'responses' must not be null");
	}

	/**
	 * Returns the rules, in the order they are tried.
	 * @return the rules
	 */
	public List<FilterRule> getRules() {
		return this.rules.rules();
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return this.rules.rules().isEmpty();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		@Nullable PathContainer path = this.rules.needsPath() ? path(request) : null;
		FilterRules.Plan plan = this.rules.plan(request, request.getMethod(), path);
		FilterRule missingKey = plan.missingKey();
		if (missingKey != null) {
			missingKey.reportNullKey(request.getMethod() + " " + request.getRequestURI());
			this.responses.writeMissingKey(request, response);
			return;
		}
		if (!plan.requests().isEmpty()) {
			Acquisition acquisition;
			try {
				acquisition = this.acquirer.acquire(plan.requests());
			}
			catch (StoreUnavailableException ex) {
				this.responses.writeUnavailable(request, response);
				return;
			}
			for (RateLimitResult result : acquisition.results()) {
				this.responses.addHeaders(request, response, result);
			}
			if (!acquisition.granted()) {
				RateLimitResult rejection = acquisition.rejection();
				this.responses.writeRejection(request, response, rejection.bucket().name(), rejection.decision());
				return;
			}
			if (plan.settles()) {
				proceedAndSettle(request, response, chain, plan, acquisition);
				return;
			}
		}
		chain.doFilter(request, response);
	}

	/**
	 * Continues the chain, then settles from the response once it is complete: at once,
	 * or, when the request went asynchronous (a streamed or deferred response), when it
	 * completes, fails or times out. A chain that throws is settled as a 500.
	 */
	private void proceedAndSettle(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			FilterRules.Plan plan, Acquisition acquisition) throws ServletException, IOException {
		boolean failed = true;
		try {
			chain.doFilter(request, response);
			failed = false;
		}
		finally {
			if (!failed && request.isAsyncStarted()) {
				request.getAsyncContext().addListener(new SettleOnCompletion(plan, acquisition, response));
			}
			else {
				FilterRules.settle(plan, acquisition, failed ? 500 : response.getStatus(), response::getHeader,
						this.acquirer);
			}
		}
	}

	/**
	 * Settles an asynchronous request once, when it ends.
	 */
	private final class SettleOnCompletion implements AsyncListener {

		private final FilterRules.Plan plan;

		private final Acquisition acquisition;

		private final HttpServletResponse response;

		private final AtomicBoolean settled = new AtomicBoolean();

		SettleOnCompletion(FilterRules.Plan plan, Acquisition acquisition, HttpServletResponse response) {
			this.plan = plan;
			this.acquisition = acquisition;
			this.response = response;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			settle(this.response.getStatus());
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			settle(503);
		}

		@Override
		public void onError(AsyncEvent event) {
			settle(500);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this);
		}

		private void settle(int status) {
			if (this.settled.compareAndSet(false, true)) {
				FilterRules.settle(this.plan, this.acquisition, status, this.response::getHeader,
						RateLimitFilter.this.acquirer);
			}
		}

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

}
