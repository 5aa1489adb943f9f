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
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.InFlightPermits;
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
 * A rule with {@code concurrency} takes a permit of its key before the rate limits are
 * asked (a request refused by either holds nothing afterwards) and holds it until the
 * response is complete: for a request that went asynchronous (a streamed, deferred or
 * {@code SseEmitter} response), until it completes, fails or times out.
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
		if (plan.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		InFlightPermits inFlight;
		try {
			inFlight = plan.decidesBothAtOnce()
					? InFlightPermits.acquire(plan.inFlight().get(0), plan.requests().get(0), this.acquirer)
					: InFlightPermits.acquire(plan.inFlight());
		}
		catch (StoreUnavailableException ex) {
			this.responses.writeUnavailable(request, response);
			return;
		}
		ConcurrencyPermit refused = inFlight.rejection();
		if (refused != null) {
			this.responses.writeRejection(request, response, plan.concurrencyPolicy(refused.bucket()),
					refused.decision().asDecision());
			return;
		}
		this.responses.addHeaders(request, response, inFlight);
		boolean handedOn = false;
		try {
			Acquisition acquisition = inFlight.acquisition();
			if (acquisition == null && !plan.requests().isEmpty()) {
				try {
					acquisition = this.acquirer.acquire(plan.requests());
				}
				catch (StoreUnavailableException ex) {
					this.responses.writeUnavailable(request, response);
					return;
				}
			}
			if (acquisition != null) {
				for (RateLimitResult result : acquisition.results()) {
					this.responses.addHeaders(request, response, result);
				}
				if (!acquisition.granted()) {
					RateLimitResult rejection = acquisition.rejection();
					this.responses.writeRejection(request, response, rejection.bucket().name(), rejection.decision());
					return;
				}
			}
			handedOn = true;
			if (inFlight.held().isEmpty() && (acquisition == null || !plan.settles())) {
				// Nothing to do once the response is complete: the common case, kept free
				// of a listener.
				chain.doFilter(request, response);
				return;
			}
			proceed(request, response, chain, new Completion(plan, acquisition, inFlight, response));
		}
		finally {
			if (!handedOn) {
				inFlight.release();
			}
		}
	}

	/**
	 * Continues the chain, then completes the request once its response is: at once, or,
	 * when the request went asynchronous (a streamed or deferred response), when it
	 * completes, fails or times out. A chain that throws is completed as a 500.
	 */
	private void proceed(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			Completion completion) throws ServletException, IOException {
		boolean failed = true;
		try {
			chain.doFilter(request, response);
			failed = false;
		}
		finally {
			if (!failed && request.isAsyncStarted()) {
				request.getAsyncContext().addListener(completion);
			}
			else {
				completion.complete(failed ? 500 : response.getStatus());
			}
		}
	}

	/**
	 * What a request does once its response is complete, once: settles what rules with a
	 * {@code settle} reserved, from the response, and releases its concurrency permits.
	 * An {@link AsyncListener} for a request that went asynchronous.
	 */
	private final class Completion implements AsyncListener {

		private final FilterRules.Plan plan;

		private final @Nullable Acquisition acquisition;

		private final InFlightPermits inFlight;

		private final HttpServletResponse response;

		private final AtomicBoolean completed = new AtomicBoolean();

		Completion(FilterRules.Plan plan, @Nullable Acquisition acquisition, InFlightPermits inFlight,
				HttpServletResponse response) {
			this.plan = plan;
			this.acquisition = acquisition;
			this.inFlight = inFlight;
			this.response = response;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			complete(this.response.getStatus());
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			complete(503);
		}

		@Override
		public void onError(AsyncEvent event) {
			complete(500);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			event.getAsyncContext().addListener(this);
		}

		void complete(int status) {
			if (!this.completed.compareAndSet(false, true)) {
				return;
			}
			try {
				if (this.acquisition != null && this.plan.settles()) {
					FilterRules.settle(this.plan, this.acquisition, status, this.response::getHeader,
							RateLimitFilter.this.acquirer);
				}
			}
			finally {
				this.inFlight.release();
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
