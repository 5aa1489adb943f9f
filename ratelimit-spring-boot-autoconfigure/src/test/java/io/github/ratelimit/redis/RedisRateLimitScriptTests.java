package io.github.ratelimit.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisRateLimitScriptTests {

	private static final Path SCRIPTS = Path.of("src/main/resources/META-INF/ratelimit/scripts");

	private final RedisRateLimitScript script = RedisRateLimitScript.load();

	@Test
	void everyModuleIsJoinedIntoOneChunk() {
		assertThat(this.script.source())
			.contains("-- bucket.lua:", "-- fixed_window.lua:", "-- sliding_log.lua:", "-- sliding_window.lua:",
					"-- sliding_window_counter.lua:", "-- exact_products.lua:", "-- charged.lua:", "-- heartbeat.lua:")
			.doesNotContainPattern("(?m)^(?!\\s*--).*require\\(");
		assertThat(this.script.redisScript().getScriptAsString()).isEqualTo(this.script.source());
		assertThat(this.script.sha1()).isEqualTo(this.script.redisScript().getSha1()).hasSize(40);
	}

	@Test
	void everyScriptFileIsShortAndSaysWhatItTakesAndReturns() throws IOException {
		List<Path> files;
		try (Stream<Path> listed = Files.list(SCRIPTS)) {
			files = listed.filter((file) -> file.toString().endsWith(".lua")).toList();
		}
		assertThat(files).hasSizeGreaterThanOrEqualTo(10);
		for (Path file : files) {
			List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
			String name = file.getFileName().toString();
			assertThat(lines).as(name).hasSizeLessThanOrEqualTo(200);
			assertThat(lines.get(0)).as(name).startsWith("-- " + name + ":");
			assertThat(String.join("\n", lines)).as(name).containsPattern("(?m)^-- Returns ");
		}
	}

	@Test
	void theScriptStandsOnTheRepositorysOwnFiles() {
		assertThat(this.script.source()).doesNotContainIgnoringCase("design.md").doesNotContain("§");
	}

}
