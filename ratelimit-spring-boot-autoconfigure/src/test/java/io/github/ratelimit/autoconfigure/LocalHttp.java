package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Plain HTTP/1.1 requests to an application the test started on a local port.
 */
final class LocalHttp {

	/**
	 * Far more than a request takes, also on a busy machine: a bound, not an expectation.
	 */
	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private LocalHttp() {
	}

	/**
	 * Starts a request to {@code path} on {@code port} of this machine.
	 */
	static HttpRequest.Builder request(int port, String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(REQUEST_TIMEOUT);
	}

	/**
	 * Sends a request and reads its body as text.
	 */
	static HttpResponse<String> send(HttpRequest request) {
		// A client per request, so a connection per request: on a shared client's
		// kept-alive connection, a request right after a 405 of the reactive stack now
		// and then got no answer for a minute (1 run in 4 of the whole build), which is
		// the transport's, not what these tests are about. HTTP/1.1: the client's default
		// would first ask to upgrade to HTTP/2.
		HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		try {
			return http.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
