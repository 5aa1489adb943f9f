package io.github.ratelimit.web.servlet;

import java.util.List;
import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.MockServletContext;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitProblem;

import static org.hamcrest.Matchers.containsString;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link RateLimitExceptionResolver} in a Spring MVC application context, with
 * the application's own catch-all {@code @ExceptionHandler}. No observer is registered,
 * so the limit headers come from the resolver alone.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RateLimitExceptionResolverTests {

	private final AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();

	private MockMvc mvc;

	@BeforeEach
	void startContext() {
		this.context.setServletContext(new MockServletContext());
		this.context.register(WebConfiguration.class);
		this.context.refresh();
		this.mvc = MockMvcBuilders.webAppContextSetup(this.context).build();
	}

	@AfterEach
	void closeContext() {
		this.context.close();
	}

	@Test
	void rejectionShouldBeA429ProblemWithLimitHeaders() throws Exception {
		this.mvc.perform(get("/reject"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "30"))
			.andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.type").value(RateLimitProblem.QUOTA_EXCEEDED_TYPE))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$.detail").value(containsString("'partner'")))
			.andExpect(jsonPath("$.violated-policies[0]").value("partner"))
			.andExpect(header().stringValues(RateLimitHeaders.POLICY, "\"partner\";q=2;w=60"))
			.andExpect(header().stringValues(RateLimitHeaders.RATE_LIMIT, "\"partner\";r=0;t=60"));
	}

	@Test
	void aConcurrencyRejectionAdvertisesAPolicyOfConcurrentRequests() throws Exception {
		this.mvc.perform(get("/busy"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "8"))
			.andExpect(jsonPath("$.violated-policies[0]").value("exports"))
			.andExpect(header().stringValues(RateLimitHeaders.POLICY, "\"exports\";q=5;qu=\"concurrent-requests\""))
			.andExpect(header().stringValues(RateLimitHeaders.RATE_LIMIT, "\"exports\";r=0"));
	}

	@Test
	void aConcurrencyRejectionOfABucketRateLimitedTooNamesItsPolicyApart() throws Exception {
		this.mvc.perform(get("/busy-and-limited"))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.violated-policies[0]").value("exports-concurrency"))
			.andExpect(header().stringValues(RateLimitHeaders.POLICY,
					"\"exports-concurrency\";q=5;qu=\"concurrent-requests\""))
			.andExpect(header().stringValues(RateLimitHeaders.RATE_LIMIT, "\"exports-concurrency\";r=0"));
	}

	@Test
	void rejectionShouldWinOverACatchAllExceptionHandler() throws Exception {
		this.mvc.perform(get("/reject")).andExpect(status().isTooManyRequests());
	}

	@Test
	void wrappedRejectionShouldBeFound() throws Exception {
		this.mvc.perform(get("/wrapped"))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.violated-policies[0]").value("partner"));
	}

	@Test
	void otherExceptionsShouldBeLeftToTheApplication() throws Exception {
		this.mvc.perform(get("/fail"))
			.andExpect(status().isInternalServerError())
			.andExpect(content().string("advice"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebMvc
	static class WebConfiguration {

		@Bean
		RateLimitExceptionResolver rateLimitExceptionResolver() {
			return new RateLimitExceptionResolver(new RateLimitResponses(new RateLimitHeaders(HeadersMode.DRAFT)));
		}

		@Bean
		FailingController failingController() {
			return new FailingController();
		}

		@Bean
		CatchAllAdvice catchAllAdvice() {
			return new CatchAllAdvice();
		}

	}

	@RestController
	static class FailingController {

		private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
			.timeSource(new ManualTimeSource(WebTestSupport.START_MICROS))
			.build();

		private final List<LimitSpec> limits = List.of(LimitSpec.of(2, "1m", Algorithm.TOKEN_BUCKET));

		@GetMapping("/reject")
		String reject() {
			throw rejection();
		}

		@GetMapping("/wrapped")
		String wrapped() {
			throw new CompletionException(rejection());
		}

		@GetMapping("/busy")
		String busy() {
			throw new ConcurrencyLimitExceededException("exports", new ConcurrencyDecision(false, 5, 5, 0, 7_500_000));
		}

		@GetMapping("/busy-and-limited")
		String busyAndLimited() {
			throw new ConcurrencyLimitExceededException("exports", new ConcurrencyDecision(false, 5, 5, 0, 7_500_000),
					true);
		}

		@GetMapping("/fail")
		String fail() {
			throw new IllegalStateException("boom");
		}

		private RateLimitExceededException rejection() {
			Decision decision = null;
			for (int i = 0; i < 3; i++) {
				decision = this.store.decide("partner", "", this.limits, 1);
			}
			this.store.clear();
			return new RateLimitExceededException("partner", decision);
		}

	}

	@RestControllerAdvice
	static class CatchAllAdvice {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> any(Exception ex) {
			return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("advice");
		}

	}

}
