package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

import io.github.ratelimit.annotation.ConcurrencyLimited;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.HeldPermits;

/**
 * Renders a tenant's export on an expensive renderer that takes about half a second per
 * export: at most 5 exports per tenant in flight across every instance, a request waiting
 * up to 30 seconds for a slot. The renderer is {@code sample.exports.renderer-url}, or a
 * half-second pause here when unset.
 */
@Service
class ExportService {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

	private final String rendererUrl;

	ExportService(@Value("${sample.exports.renderer-url:}") String rendererUrl) {
		this.rendererUrl = rendererUrl;
	}

	@ConcurrencyLimited(bucket = "exports", key = "#tenant", permits = 5, lease = "10s", maxWait = "30s")
	public String export(String tenant) throws IOException, InterruptedException {
		// A JVM stopped for longer than the lease may resume with its permit gone: do
		// not start the expensive part then.
		if (HeldPermits.current().map(ConcurrencyPermit::leaseExpired).orElse(false)) {
			throw new IllegalStateException("the export's permit expired before it started; retry");
		}
		if (this.rendererUrl.isEmpty()) {
			Thread.sleep(500);
			return "export of " + tenant;
		}
		HttpRequest request = HttpRequest.newBuilder(URI.create(this.rendererUrl + "?tenant=" + tenant))
			.timeout(Duration.ofSeconds(60))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString()).body();
	}

}
