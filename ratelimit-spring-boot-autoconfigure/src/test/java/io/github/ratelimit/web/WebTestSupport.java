package io.github.ratelimit.web;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.Filter;

import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.spring.BucketDefinition;
import io.github.ratelimit.spring.BucketSource;
import io.github.ratelimit.spring.LimitMode;
import io.github.ratelimit.spring.RateLimitExpressions;
import io.github.ratelimit.spring.RateLimitService;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The pieces a web test needs: an in-memory store on a manual clock, the service with the
 * header observer, and builders for buckets, rules and MockMvc.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class WebTestSupport {

	/** A whole number of minutes since the epoch, so fixed windows start here. */
	static final long START_MICROS = 28_333_333L * 60_000_000L;

	final ManualTimeSource time = new ManualTimeSource(START_MICROS);

	final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
		.timeSource(this.time)
		.executor(Runnable::run)
		.build();

	final RateLimitExpressions expressions = new RateLimitExpressions(null);

	final RateLimitHeaders headers;

	final RateLimitService service;

	final RateLimitResponses responses;

	final AtomicInteger handled = new AtomicInteger();

	WebTestSupport() {
		this(HeadersMode.DRAFT);
	}

	WebTestSupport(HeadersMode mode) {
		this.headers = new RateLimitHeaders(mode);
		this.service = new RateLimitService(this.store, List.of(new ResponseHeadersObserver(this.headers)));
		this.responses = new RateLimitResponses(this.headers);
	}

	static BucketDefinition bucket(String name, LimitSpec... limits) {
		return new BucketDefinition(name, Arrays.asList(limits), LimitMode.ENFORCE, BucketSource.FILTER);
	}

	static BucketDefinition shadowBucket(String name, LimitSpec... limits) {
		return new BucketDefinition(name, Arrays.asList(limits), LimitMode.SHADOW, BucketSource.FILTER);
	}

	FilterRule.Builder rule(int index, BucketDefinition bucket) {
		return FilterRule.builder("ratelimit.filter.rules[" + index + "]", bucket);
	}

	RateLimitFilter filter(MatchMode match, FilterRule.Builder... rules) {
		return new RateLimitFilter(Arrays.stream(rules).map((rule) -> rule.build(this.expressions)).toList(), match,
				this.service, this.responses);
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
