package io.github.ratelimit.webflux;

import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * A small WebFlux application, the reactive twin of the sample application's web part:
 * filter rules on {@code /api/greeting} (bucket {@code api}), {@code /api/search} (bucket
 * {@code search}, shadow) and {@code /api/smooth} (bucket {@code smooth}, leaky bucket),
 * and {@code @RateLimited} controller methods returning {@code Mono} and {@code Flux}.
 * The store runs on a manual clock and the waiter lets every delay pass at once, moving
 * that clock, so tests recover from rejections without sleeping and see every delay asked
 * for. The properties are in {@link WebFluxApplicationTests}.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration(excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@Import({ WebFluxTestApplication.GreetingController.class, WebFluxTestApplication.QuoteController.class })
class WebFluxTestApplication {

	@Bean
	ManualTimeSource rateLimitClock() {
		return new ManualTimeSource(1_700_000_000_000_000L);
	}

	@Bean
	ManualWaiter rateLimitWaiter(ManualTimeSource rateLimitClock) {
		return ManualWaiter.releasingDelays(rateLimitClock);
	}

	@Bean
	RateLimitStore manualClockRateLimitStore(ManualTimeSource rateLimitClock) {
		return InMemoryRateLimitStore.builder().timeSource(rateLimitClock).executor(Runnable::run).build();
	}

	@RestController
	static class GreetingController {

		@GetMapping("/api/greeting")
		Mono<Map<String, String>> greeting(@RequestParam(defaultValue = "world") String name) {
			return Mono.just(Map.of("greeting", "Hello, " + name + "!"));
		}

		@GetMapping("/api/search")
		Mono<Map<String, String>> search(@RequestParam(defaultValue = "") String q) {
			return Mono.just(Map.of("query", q));
		}

		@GetMapping("/api/smooth")
		Mono<String> smooth() {
			return Mono.just("smooth");
		}

	}

	@RestController
	static class QuoteController {

		/**
		 * Three quotes per 10 seconds per client: {@code #clientIp} is the client's
		 * address as the filter rules see it, from the request the web filter put in the
		 * subscriber's context.
		 */
		@GetMapping("/api/quote")
		@RateLimited(bucket = "quotes", key = "#clientIp", limit = 3, window = "10s",
				algorithm = Algorithm.FIXED_WINDOW)
		Mono<Map<String, String>> quote() {
			return Mono.just(Map.of("quote", "Simple is better than complex."));
		}

		/**
		 * One call per minute per {@code X-Client} header, read through {@code #request}
		 * without a request parameter: the web filter put the exchange in the
		 * subscriber's context.
		 */
		@GetMapping("/api/client-quote")
		@RateLimited(bucket = "client-quotes", key = "#request.headers.getFirst('X-Client')", limit = 1, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW)
		@RateLimited(bucket = "path-quotes", key = "#exchange.request.path.value()", limit = 3, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW)
		Mono<String> clientQuote() {
			return Mono.just("quote");
		}

		@GetMapping("/api/words")
		@RateLimited(bucket = "words", limit = 1, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		Flux<String> words() {
			return Flux.just("rate", "limited");
		}

	}

}
