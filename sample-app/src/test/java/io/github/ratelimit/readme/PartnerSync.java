package io.github.ratelimit.readme;

import org.springframework.stereotype.Service;

import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;

@Service
class PartnerSync {

	private final PartnerApi partner;

	PartnerSync(PartnerApi partner) {
		this.partner = partner;
	}

	// The partner allows 20 calls per second across all our instances: wait for a permit.
	@RateLimited(bucket = "partner", limit = 20, window = "1s", onLimit = OnLimit.WAIT, maxWait = "5s")
	void push(String record) {
		this.partner.push(record);
	}

}
