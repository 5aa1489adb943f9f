package io.github.ratelimit.benchmarks.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The application of {@code http-vs-bucket4j-starter}: {@code GET /api/hello} and
 * {@code GET /api/small}, limited per {@code X-Api-Key} header by our starter (profile
 * {@code ours}) or by bucket4j-spring-boot-starter (profile {@code bucket4j}), both
 * keeping their state in Redis. {@code benchmarks/run.sh} starts one of each.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@SpringBootApplication
public class BenchmarkApplication {

	/**
	 * Starts the application.
	 * @param args command-line arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(BenchmarkApplication.class, args);
	}

}
