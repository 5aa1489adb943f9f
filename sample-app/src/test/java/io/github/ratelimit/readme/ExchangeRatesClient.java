package io.github.ratelimit.readme;

import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;

@Component
public class ExchangeRatesClient {

	private final RestClient rest;

	public ExchangeRatesClient(RestClient.Builder builder) {
		this.rest = builder.baseUrl("https://rates.example.com").build();
	}

	// The provider allows 10 calls per second for our whole account: burst = 1
	// spaces them 100 ms apart (the default burst, the limit, would let 10 more go
	// at once). With Redis, every instance shares this limit; a caller waits up to
	// 2 seconds for a permit instead of failing.
	@RateLimited(bucket = "exchange-rates", limit = 10, window = "1s", burst = 1, algorithm = Algorithm.GCRA,
			onLimit = OnLimit.WAIT, maxWait = "2s")
	public String rate(String currency) {
		return this.rest.get().uri("/rates/{currency}", currency).retrieve().body(String.class);
	}

}
