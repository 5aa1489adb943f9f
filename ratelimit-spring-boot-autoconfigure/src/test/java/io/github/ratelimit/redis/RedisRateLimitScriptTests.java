package io.github.ratelimit.redis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisRateLimitScriptTests {

	private final RedisRateLimitScript script = RedisRateLimitScript.load();

	@Test
	void everyAlgorithmFileIsJoinedIntoOneChunk() {
		assertThat(this.script.source()).doesNotContainPattern("(?m)^\\s*--\\+")
			.contains("-- bucket.lua:", "-- fixed_window.lua:", "-- sliding_log.lua:", "-- sliding_window.lua:",
					"-- sliding_window_counter.lua:", "-- exact_products.lua:");
		assertThat(this.script.redisScript().getScriptAsString()).isEqualTo(this.script.source());
		assertThat(this.script.sha1()).isEqualTo(this.script.redisScript().getSha1()).hasSize(40);
	}

	@Test
	void theScriptStandsOnTheRepositorysOwnFiles() {
		assertThat(this.script.source()).doesNotContainIgnoringCase("design.md").doesNotContain("§");
	}

}
