package io.github.ratelimit.readme;

import org.springframework.stereotype.Service;

import io.github.ratelimit.annotation.ConcurrencyLimited;

@Service
public class TenantExports {

	private final Renderer renderer;

	public TenantExports(Renderer renderer) {
		this.renderer = renderer;
	}

	// At most 5 exports per tenant in flight on all instances together; a sixth waits
	// up to 30 s for one to finish, then gets a 429.
	@ConcurrencyLimited(bucket = "exports", key = "#tenant", permits = 5, maxWait = "30s")
	public byte[] export(String tenant) {
		return this.renderer.render(tenant);
	}

}
