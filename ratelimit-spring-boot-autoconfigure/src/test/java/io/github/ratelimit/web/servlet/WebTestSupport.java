package io.github.ratelimit.web.servlet;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.MatchMode;
import io.github.ratelimit.web.RateLimitHeaders;

/**
 * The pieces a web test needs: an in-memory store on a manual clock, a waiter in virtual
 * time, the acquirer with the header observer, and builders for buckets, rules and
 * MockMvc.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class WebTestSupport {

	/** A whole number of minutes since the epoch, so fixed windows start here. */
	static final long START_MICROS = 28_333_333L * 60_000_000L;

	final ManualTimeSource time = new ManualTimeSource(START_MICROS);

	final ManualWaiter waiter = new ManualWaiter(this.time);

	final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
		.timeSource(this.time)
		.executor(Runnable::run)
		.build();

	final RateLimitExpressions expressions = new RateLimitExpressions(null);

	final RateLimitHeaders headers;

	final RateLimitResponses responses;

	final Acquirer acquirer;

	final AtomicInteger handled = new AtomicInteger();

	WebTestSupport() {
		this(HeadersMode.DRAFT);
	}

	WebTestSupport(HeadersMode mode) {
		this.headers = new RateLimitHeaders(mode);
		this.responses = new RateLimitResponses(this.headers);
		this.acquirer = Acquirer.builder(this.store)
			.waiter(this.waiter)
			.observer(new ResponseHeadersObserver(this.responses))
			.build();
	}

	static Bucket bucket(String name, LimitSpec... limits) {
		return new Bucket(name, Arrays.asList(limits), LimitMode.ENFORCE);
	}

	static Bucket shadowBucket(String name, LimitSpec... limits) {
		return new Bucket(name, Arrays.asList(limits), LimitMode.SHADOW);
	}

	FilterRule.Builder rule(int index, Bucket bucket) {
		return FilterRule.builder("ratelimit.filter.rules[" + index + "]", bucket);
	}

	RateLimitFilter filter(MatchMode match, FilterRule.Builder... rules) {
		List<FilterRule> built = Arrays.stream(rules)
			.map((rule) -> rule.build(this.expressions, HttpServletRequest.class))
			.toList();
		return new RateLimitFilter(new FilterRules(built, match), this.acquirer, this.responses);
	}

	MockMvc mvc(Filter... filters) {
		return MockMvcBuilders.standaloneSetup(new AnyPathController(this.handled)).addFilters(filters).build();
	}

	/**
	 * Answers every path and method with {@code ok}, counting the requests that reach it.
	 */
	@RestController
	static class AnyPathController {

		private final AtomicInteger handled;

		AnyPathController(AtomicInteger handled) {
			this.handled = handled;
		}

		@RequestMapping("/**")
		String any() {
			this.handled.incrementAndGet();
			return "ok";
		}

	}

}
