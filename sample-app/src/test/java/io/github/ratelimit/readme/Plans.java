package io.github.ratelimit.readme;

import java.util.Map;

import org.springframework.stereotype.Component;

@Component("plans")
public class Plans {

	private static final Map<String, Long> REPORTS_PER_MINUTE = Map.of("free", 5L, "premium", 50L);

	private final CustomerDirectory customers;

	public Plans(CustomerDirectory customers) {
		this.customers = customers;
	}

	public long limitFor(String apiKey) {
		return REPORTS_PER_MINUTE.getOrDefault(this.customers.planOf(apiKey), 5L);
	}

}
