package io.github.ratelimit.web;

import jakarta.servlet.Filter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.filter.RequestContextFilter;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.spring.BucketDefinition;
import io.github.ratelimit.spring.RateLimitResult;
import io.github.ratelimit.spring.RateLimitService;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link ResponseHeadersObserver}, and that a request limited by a filter rule
 * and by a {@code @RateLimited} method gets exactly one header member per decision. The
 * controller below decides through the service as the aspect does, so the observer
 * reports its decisions.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class ResponseHeadersObserverTests {

	private final WebTestSupport support = new WebTestSupport(HeadersMode.BOTH);

	private final BucketDefinition api = WebTestSupport.bucket("api", LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));

	private final BucketDefinition login = WebTestSupport.bucket("login", LimitSpec.of(1, "1m", Algorithm.SLIDING_LOG));

	@AfterEach
	void resetRequestContext() {
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void filterRuleAndAnnotatedMethodShouldGiveOneMemberEach() throws Exception {
		MockMvc mvc = mvc(false);
		mvc.perform(get("/login").param("user", "alice"))
			.andExpect(status().isOk())
			.andExpect(header().stringValues(RateLimitHeaders.RATE_LIMIT, "\"api\";r=99;t=60, \"login\";r=0;t=60"))
			.andExpect(header().stringValues(RateLimitHeaders.POLICY, "\"api\";q=100;w=60, \"login\";q=1;w=60"))
			.andExpect(header().stringValues(RateLimitHeaders.LEGACY_LIMIT, "1"))
			.andExpect(header().stringValues(RateLimitHeaders.LEGACY_REMAINING, "0"));
	}

	@Test
	void requestContextBoundBeforeTheFilterShouldNotDuplicateMembers() throws Exception {
		MockMvc mvc = mvc(true);
		mvc.perform(get("/login").param("user", "alice"))
			.andExpect(status().isOk())
			.andExpect(header().stringValues(RateLimitHeaders.RATE_LIMIT, "\"api\";r=99;t=60, \"login\";r=0;t=60"));
	}

	@Test
	void annotatedRejectionShouldBeA429WithOneMemberPerDecision() throws Exception {
		MockMvc mvc = mvc(false);
		mvc.perform(get("/login").param("user", "alice")).andExpect(status().isOk());
		mvc.perform(get("/login").param("user", "alice"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "60"))
			.andExpect(jsonPath("$.violated-policies.length()").value(1))
			.andExpect(jsonPath("$.violated-policies[0]").value("login"))
			.andExpect(header().stringValues(RateLimitHeaders.RATE_LIMIT, "\"api\";r=98;t=60, \"login\";r=0;t=60"))
			.andExpect(header().stringValues(RateLimitHeaders.LEGACY_LIMIT, "1"));
	}

	@Test
	void decisionOutsideARequestShouldBeIgnored() {
		ResponseHeadersObserver observer = new ResponseHeadersObserver(this.support.headers);
		RateLimitResult result = this.support.service.decide(this.login, "job", this.login.limits(), 1,
				RateLimitStore.NO_MAX_DELAY);
		observer.onDecision(result);
		assertThat(RequestContextHolder.getRequestAttributes()).isNull();
	}

	@Test
	void decisionDuringARequestShouldBeWrittenToItsResponse() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		MockHttpServletResponse response = new MockHttpServletResponse();
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, response));
		this.support.service.decide(this.login, "alice", this.login.limits(), 1, RateLimitStore.NO_MAX_DELAY);
		assertThat(response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"login\";r=0;t=60");
	}

	private MockMvc mvc(boolean requestContextFirst) {
		RateLimitFilter filter = this.support.filter(MatchMode.FIRST, this.support.rule(0, this.api));
		Filter[] filters = requestContextFirst ? new Filter[] { new RequestContextFilter(), filter }
				: new Filter[] { filter };
		return MockMvcBuilders.standaloneSetup(new LoginController(this.support.service, this.login))
			.addFilters(filters)
			.setHandlerExceptionResolvers(new RateLimitExceptionResolver(this.support.responses))
			.build();
	}

	/**
	 * Decides through the service like the {@code @RateLimited} aspect: one decision per
	 * call, a rejection thrown as {@link RateLimitExceededException}.
	 */
	@RestController
	static class LoginController {

		private final RateLimitService service;

		private final BucketDefinition bucket;

		LoginController(RateLimitService service, BucketDefinition bucket) {
			this.service = service;
			this.bucket = bucket;
		}

		@GetMapping("/login")
		String login(@RequestParam String user) {
			RateLimitResult result = this.service.decide(this.bucket, user, this.bucket.limits(), 1,
					RateLimitStore.NO_MAX_DELAY);
			if (!result.proceeds()) {
				throw new RateLimitExceededException(this.bucket.name(), result.decision());
			}
			return "welcome " + user;
		}

	}

}
