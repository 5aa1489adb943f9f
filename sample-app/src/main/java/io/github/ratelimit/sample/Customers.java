package io.github.ratelimit.sample;

import java.time.ZoneId;
import java.util.Map;

import org.springframework.stereotype.Component;

/**
 * Where the "LLM API"'s customers are: each key's monthly token quota starts at its
 * customer's midnight on the first of the month. Keys not listed are in Berlin.
 */
@Component("customers")
public class Customers {

	private static final Map<String, ZoneId> ZONES = Map.of("acme-nyc", ZoneId.of("America/New_York"), "acme-tokyo",
			ZoneId.of("Asia/Tokyo"));

	private static final ZoneId DEFAULT = ZoneId.of("Europe/Berlin");

	/**
	 * Returns the time zone of a key's customer.
	 * @param apiKey the key
	 * @return the zone
	 */
	public ZoneId zoneOf(String apiKey) {
		return ZONES.getOrDefault(apiKey, DEFAULT);
	}

}
