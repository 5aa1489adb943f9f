package io.github.ratelimit.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service behind the gateway in tests: a Reactor Netty server on a free port that
 * answers every request with {@code backend} and counts the requests that reached it;
 * requests to {@code /exports/**} wait for a gate the test opens.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Backend implements AutoCloseable {

	private final AtomicInteger requests = new AtomicInteger();

	private final AtomicInteger held = new AtomicInteger();

	private final AtomicInteger mostHeld = new AtomicInteger();

	private volatile CompletableFuture<String> gate = new CompletableFuture<>();

	private volatile CompletableFuture<String> holdGate = new CompletableFuture<>();

	private final DisposableServer server;

	private Backend() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			this.requests.incrementAndGet();
			if (request.uri().endsWith("/hold")) {
				// Held until the test lets them go, uncounted.
				return response.sendString(Mono.fromFuture(this.holdGate, true));
			}
			if (request.uri().startsWith("/exports/")) {
				// Held until the test opens the gate, counting the requests it holds.
				return response.sendString(Mono.defer(() -> {
					this.mostHeld.accumulateAndGet(this.held.incrementAndGet(), Math::max);
					return Mono.fromFuture(this.gate, true);
				}).doFinally((signal) -> this.held.decrementAndGet()));
			}
			// A metered backend says what a request used: ?used=<n> answers it as
			// X-Tokens-Used.
			String query = URI.create(request.uri()).getQuery();
			if (query != null && query.startsWith("used=")) {
				response.header("X-Tokens-Used", query.substring("used=".length()));
			}
			return response.sendString(Mono.just("backend"));
		}).bindNow();
	}

	static Backend start() {
		return new Backend();
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	int requests() {
		return this.requests.get();
	}

	/** Returns the requests to {@code /exports/**} waiting for the gate. */
	int held() {
		return this.held.get();
	}

	/** Returns the most requests to {@code /exports/**} that waited at once. */
	int mostHeld() {
		return this.mostHeld.get();
	}

	/**
	 * Answers every request to a path ending in {@code /hold} that waits, and holds later
	 * ones again.
	 */
	void letHeldGo() {
		CompletableFuture<String> held = this.holdGate;
		this.holdGate = new CompletableFuture<>();
		held.complete("held");
	}

	/** Answers every request waiting for the gate, and lets later ones through. */
	void openGate() {
		this.gate.complete("exported");
	}

	@Override
	public void close() {
		this.server.disposeNow();
	}

	/**
	 * A client per request, so a connection per request: on a client's kept-alive
	 * connection, a request to a Netty server now and then got no answer for its whole
	 * timeout in a loaded build (three tests, three stacks), which is the transport's,
	 * not what these tests are about.
	 */
	private static HttpClient client() {
		return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
	}

	/**
	 * Sends a GET through a gateway, as user {@code user} (the {@code X-User} header the
	 * test key resolver reads).
	 */
	static HttpResponse<String> get(int port, String path, String user) throws Exception {
		return client().send(request(port, path, user), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * Sends a GET through a gateway, as user {@code user}, without waiting for the
	 * answer.
	 */
	static CompletableFuture<HttpResponse<String>> getAsync(int port, String path, String user) {
		return client().sendAsync(request(port, path, user), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest request(int port, String path, String user) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-User", user)
			.timeout(Duration.ofSeconds(60))
			.GET()
			.build();
	}

	/**
	 * Sends a GET through a gateway with an {@code X-Forwarded-For} header, and returns
	 * its status.
	 */
	static int getForwardedFor(int port, String path, String forwardedFor) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-Forwarded-For", forwardedFor)
			.timeout(Duration.ofSeconds(30))
			.GET()
			.build();
		return client().send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

}
