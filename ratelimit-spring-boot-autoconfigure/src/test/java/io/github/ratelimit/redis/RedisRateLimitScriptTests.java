package io.github.ratelimit.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

class RedisRateLimitScriptTests {

	private final RedisRateLimitScript script = RedisRateLimitScript.load();

	@Test
	void everyAlgorithmFileIsJoinedIntoOneChunk() {
		assertThat(this.script.source()).doesNotContainPattern("(?m)^\\s*--\\+")
			.contains("-- bucket.lua:", "-- bucket_run.lua:", "-- bucket_write.lua:", "-- heartbeat.lua:",
					"-- fixed_window.lua:", "-- sliding_log.lua:", "-- sliding_window.lua:",
					"-- sliding_window_counter.lua:", "-- exact_products.lua:");
		assertThat(this.script.redisScript().getScriptAsString()).isEqualTo(this.script.source());
		assertThat(this.script.sha1()).isEqualTo(this.script.redisScript().getSha1()).hasSize(40);
	}

	@Test
	void theScriptStandsOnTheRepositorysOwnFiles() {
		assertThat(this.script.source()).doesNotContainIgnoringCase("design.md").doesNotContain("§");
	}

	/**
	 * Each file is read on its own, beside its Java twin: it says what it reads and
	 * answers (keys, arguments, and a reply or the locals it sets, or the functions it
	 * defines) and stays short enough to read at once.
	 */
	@Test
	void everyScriptFileHasAHeaderAndFitsOnAFewScreens() throws IOException {
		Resource[] files = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:META-INF/ratelimit/scripts/*.lua");
		assertThat(files).hasSizeGreaterThanOrEqualTo(10);
		for (Resource file : files) {
			String text = file.getContentAsString(StandardCharsets.UTF_8);
			assertThat(text).as(file.getFilename())
				.startsWith("-- " + file.getFilename() + ":")
				.containsPattern("(?m)^-- (KEYS|Defines)")
				.containsPattern("(?m)^-- (Returns|Sets|Uses)");
			assertThat(text.lines().count()).as("lines of %s", file.getFilename()).isLessThanOrEqualTo(200);
		}
	}

}
