package io.github.ratelimit.web.servlet;

import java.util.List;

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
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.MatchMode;
import io.github.ratelimit.web.RateLimitHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link ResponseHeadersObserver}, and that a request limited by a filter rule
 * and by a {@code @RateLimited} method gets exactly one header member per decision. The
 * controller below takes its permits through the acquirer as the aspect does, so the
 * observer reports its decisions.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class ResponseHeadersObserverTests {

	private final WebTestSupport support = new WebTestSupport(HeadersMode.BOTH);

	private final Bucket api = WebTestSupport.bucket("api", LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));

	private final Bucket login = WebTestSupport.bucket("login", LimitSpec.of(1, "1m", Algorithm.SLIDING_LOG));

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
		ResponseHeadersObserver observer = new ResponseHeadersObserver(this.support.responses);
		RateLimitResult result = this.support.acquirer.tryAcquire(PermitRequest.of(this.login, "job", 1));
		observer.onDecision(result);
		assertThat(RequestContextHolder.getRequestAttributes()).isNull();
	}

	@Test
	void decisionDuringARequestShouldBeWrittenToItsResponse() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		MockHttpServletResponse response = new MockHttpServletResponse();
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, response));
		this.support.acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1));
		assertThat(response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"login\";r=0;t=60");
	}

	private MockMvc mvc(boolean requestContextFirst) {
		RateLimitFilter filter = this.support.filter(MatchMode.FIRST, this.support.rule(0, this.api));
		Filter[] filters = requestContextFirst ? new Filter[] { new RequestContextFilter(), filter }
				: new Filter[] { filter };
		return MockMvcBuilders.standaloneSetup(new LoginController(this.support.acquirer, this.login))
			.addFilters(filters)
			.setHandlerExceptionResolvers(new RateLimitExceptionResolver(this.support.responses))
			.build();
	}

	/**
	 * Takes its permits through the acquirer like the {@code @RateLimited} aspect: a
	 * rejection thrown as {@link RateLimitExceededException}.
	 */
	@RestController
	static class LoginController {

		private final Acquirer acquirer;

		private final Bucket bucket;

		LoginController(Acquirer acquirer, Bucket bucket) {
			this.acquirer = acquirer;
			this.bucket = bucket;
		}

		@GetMapping("/login")
		String login(@RequestParam String user) {
			Acquisition acquisition = this.acquirer.acquire(List.of(PermitRequest.of(this.bucket, user, 1)));
			if (!acquisition.granted()) {
				throw acquisition.exception();
			}
			return "welcome " + user;
		}

	}

}
