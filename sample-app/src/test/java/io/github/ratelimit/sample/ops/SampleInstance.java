package io.github.ratelimit.sample.ops;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.sample.SampleApplication;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * One running sample application on a free port, started the way an operator starts it
 * ({@link SpringApplicationBuilder} on {@link SampleApplication}, command-line
 * arguments), plus a plain HTTP client to talk to it.
 * <p>
 * Settings are passed as command-line arguments, not as
 * {@code SpringApplicationBuilder.properties(..)}: those are default properties, the
 * lowest precedence, so {@code application.yml}'s {@code server.port: 8080} would win
 * over {@code server.port=0}.
 * <p>
 * Test classes of this package are never picked up by the sample's component scan:
 * spring-boot-test registers {@code TestTypeExcludeFilter} for every
 * {@code SpringApplication} on the test class path, which skips test classes, their
 * nested classes and {@code @TestConfiguration}s. Extra beans are passed as sources.
 */
final class SampleInstance implements AutoCloseable {

	static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);

	private static final Pattern STORE_STATE = Pattern.compile("\"state\"\\s*:\\s*\"([a-z]+)\"");

	private static final Pattern STORE_FAILURES = Pattern.compile("\"failures\"\\s*:\\s*(\\d+)");

	private final String name;

	private final ConfigurableApplicationContext context;

	private final int port;

	private SampleInstance(String name, ConfigurableApplicationContext context) {
		this.name = name;
		this.context = context;
		this.port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	/**
	 * Starts the sample without Redis (in-memory store).
	 * @param name a name for messages
	 * @param extraSources more configuration or beans
	 * @param args command-line arguments
	 * @return the running instance
	 */
	static SampleInstance memory(String name, List<Class<?>> extraSources, String... args) {
		return start(name, null, extraSources, (context) -> {
		}, args);
	}

	/**
	 * Starts the sample with profile {@code redis} on the test's Redis server.
	 * @param name a name for messages
	 * @param redis the test's Redis
	 * @param extraSources more configuration or beans
	 * @param initializer called on the context before it is refreshed
	 * @param args more command-line arguments
	 * @return the running instance
	 */
	static SampleInstance redis(String name, RedisServerExtension redis, List<Class<?>> extraSources,
			Consumer<ConfigurableApplicationContext> initializer, String... args) {
		List<String> all = new ArrayList<>(
				List.of("--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port()));
		all.addAll(List.of(args));
		return start(name, "redis", extraSources, initializer, all.toArray(String[]::new));
	}

	private static SampleInstance start(String name, @Nullable String profile, List<Class<?>> extraSources,
			Consumer<ConfigurableApplicationContext> initializer, String... args) {
		List<Class<?>> sources = new ArrayList<>();
		sources.add(SampleApplication.class);
		sources.addAll(extraSources);
		SpringApplicationBuilder builder = new SpringApplicationBuilder(sources.toArray(Class<?>[]::new))
			.main(SampleApplication.class);
		if (profile != null) {
			builder.profiles(profile);
		}
		builder.initializers(initializer::accept);
		List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
				// Nothing is in flight when a test closes the context; don't wait for it.
				"--server.shutdown=immediate"));
		all.addAll(List.of(args));
		return new SampleInstance(name, builder.run(all.toArray(String[]::new)));
	}

	String name() {
		return this.name;
	}

	int port() {
		return this.port;
	}

	ConfigurableApplicationContext context() {
		return this.context;
	}

	<T> T bean(Class<T> type) {
		return this.context.getBean(type);
	}

	URI uri(String pathAndQuery) {
		return URI.create("http://127.0.0.1:" + this.port + pathAndQuery);
	}

	/**
	 * Sends a GET request.
	 * @param pathAndQuery e.g. {@code /api/greeting?name=x}
	 * @param headers header names and values, alternating
	 * @return the response
	 */
	HttpResponse<String> get(String pathAndQuery, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(pathAndQuery)).timeout(REQUEST_TIMEOUT).GET();
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("GET " + pathAndQuery + " on " + this.name + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * Sends a request with a JSON body, or none.
	 * @param method e.g. {@code POST}
	 * @param path the path
	 * @param json the body, or {@code null}
	 * @return the response
	 */
	HttpResponse<String> send(String method, String path, @Nullable String json) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(REQUEST_TIMEOUT);
		if (json != null) {
			request.header("Content-Type", "application/json")
				.method(method, HttpRequest.BodyPublishers.ofString(json));
		}
		else {
			request.method(method, HttpRequest.BodyPublishers.noBody());
		}
		try {
			return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(method + " " + path + " on " + this.name + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * Sends a GET request and measures how long the answer took.
	 * @param pathAndQuery the path
	 * @return the status and the time
	 */
	Timed timedGet(String pathAndQuery) {
		long started = System.nanoTime();
		HttpResponse<String> response = get(pathAndQuery);
		long ended = System.nanoTime();
		return new Timed(response.statusCode(), started, ended, response);
	}

	/**
	 * Returns {@code store.state} of the actuator {@code ratelimits} endpoint.
	 * @return {@code healthy} or {@code degraded}
	 */
	String storeState() {
		return find(STORE_STATE, actuator());
	}

	/**
	 * Returns {@code store.failures} of the actuator {@code ratelimits} endpoint.
	 * @return the failures counted
	 */
	long storeFailures() {
		return Long.parseLong(find(STORE_FAILURES, actuator()));
	}

	private String actuator() {
		HttpResponse<String> response = get("/actuator/ratelimits");
		if (response.statusCode() != 200) {
			throw new IllegalStateException(
					"/actuator/ratelimits answered " + response.statusCode() + ": " + response.body());
		}
		return response.body();
	}

	private static String find(Pattern pattern, String json) {
		Matcher matcher = pattern.matcher(json);
		if (!matcher.find()) {
			throw new IllegalStateException(pattern + " not found in " + json);
		}
		return matcher.group(1);
	}

	@Override
	public void close() {
		this.context.close();
	}

	@Override
	public String toString() {
		return this.name + " on port " + this.port;
	}

	/**
	 * A response and when it was sent and received ({@link System#nanoTime()}).
	 *
	 * @param status the HTTP status
	 * @param startNanos when the request was sent
	 * @param endNanos when the response was complete
	 * @param response the response
	 */
	record Timed(int status, long startNanos, long endNanos, HttpResponse<String> response) {

		long millis() {
			return (this.endNanos - this.startNanos) / 1_000_000L;
		}

	}

}
