package io.github.ratelimit.sample;

import java.util.List;

import com.jayway.jsonpath.JsonPath;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads the {@code /actuator/ratelimits} listing.
 */
final class EndpointJson {

	private EndpointJson() {
	}

	/**
	 * Returns a count of one bucket.
	 * @param body the listing
	 * @param bucket the bucket name
	 * @param field {@code allowed}, {@code waited}, {@code rejected},
	 * {@code shadowRejected} or {@code errors}
	 * @return the count
	 */
	static long bucketCount(String body, String bucket, String field) {
		List<Number> values = JsonPath.read(body, "$.buckets[?(@.name == '" + bucket + "')]." + field);
		assertThat(values).as("%s of bucket %s", field, bucket).hasSize(1);
		return values.get(0).longValue();
	}

}
