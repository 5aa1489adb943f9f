package io.github.ratelimit.readme;

import org.springframework.stereotype.Service;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.ConcurrencyLimited;
import io.github.ratelimit.annotation.RateLimited;

@Service
public class TenantArchives {

	private final Renderer renderer;

	public TenantArchives(Renderer renderer) {
		this.renderer = renderer;
	}

	// 100 archives per tenant an hour, at most 2 at once: one store call takes both.
	@RateLimited(bucket = "archives", key = "#tenant", limit = 100, window = "1h", algorithm = Algorithm.SLIDING_LOG)
	@ConcurrencyLimited(bucket = "archives", key = "#tenant", permits = 2)
	public byte[] archive(String tenant) {
		return this.renderer.render(tenant);
	}

}
