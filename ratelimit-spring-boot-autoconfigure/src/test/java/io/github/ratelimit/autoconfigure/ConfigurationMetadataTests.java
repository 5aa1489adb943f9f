package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an IDE shows for the starter's properties, read from the metadata the build
 * generates ({@code META-INF/spring-configuration-metadata.json}): every property has a
 * description, in plain text; every choice (an enum: the store, the failure mode, the
 * algorithm, ...) has a hint with a description per value; the buckets and filter rules
 * are typed, so that IDEs complete their fields; the health indicator's switch is listed.
 */
class ConfigurationMetadataTests {

	private static JsonNode metadata;

	@BeforeAll
	static void read() throws IOException {
		List<URL> files = Collections.list(ConfigurationMetadataTests.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"));
		for (URL file : files) {
			try (InputStream in = file.openStream()) {
				JsonNode node = new ObjectMapper().readTree(in);
				if (node.path("groups").toString().contains("\"ratelimit\"")) {
					metadata = node;
				}
			}
		}
		assertThat(metadata).as("the starter's metadata among %s", files).isNotNull();
	}

	@Test
	void everyPropertyHasAPlainTextDescription() {
		List<String> without = new ArrayList<>();
		List<String> raw = new ArrayList<>();
		for (JsonNode property : metadata.path("properties")) {
			String description = property.path("description").asString("");
			if (description.isBlank()) {
				without.add(property.path("name").asString());
			}
			if (description.contains("{@")) {
				raw.add(property.path("name").asString() + ": " + description);
			}
		}
		assertThat(without).as("properties without a description").isEmpty();
		assertThat(raw).as("descriptions with a raw Javadoc tag").isEmpty();
		assertThat(metadata.path("properties")).hasSizeGreaterThan(30);
	}

	@Test
	void theAlgorithmHasAHintForEachAlgorithm() {
		JsonNode hint = hint("ratelimit.defaults.algorithm");
		List<String> values = new ArrayList<>();
		hint.path("values").forEach((value) -> {
			values.add(value.path("value").asString());
			assertThat(value.path("description").asString()).isNotBlank();
		});
		List<String> algorithms = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			algorithms.add(algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-'));
		}
		assertThat(values).containsExactlyInAnyOrderElementsOf(algorithms);
	}

	@Test
	void everyChoiceHasAHintPerValueWithADescription() throws ClassNotFoundException {
		List<String> checked = new ArrayList<>();
		for (JsonNode property : metadata.path("properties")) {
			String name = property.path("name").asString();
			Class<?> type = name.startsWith("ratelimit.") ? typeOf(property.path("type").asString()) : null;
			if (type == null || !type.isEnum()) {
				continue;
			}
			List<String> values = new ArrayList<>();
			hint(name).path("values").forEach((value) -> {
				values.add(value.path("value").asString());
				assertThat(value.path("description").asString()).as("%s=%s", name, value).isNotBlank();
			});
			List<String> constants = new ArrayList<>();
			for (Object constant : type.getEnumConstants()) {
				constants.add(((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'));
			}
			assertThat(values).as(name).containsExactlyInAnyOrderElementsOf(constants);
			checked.add(name);
		}
		assertThat(checked).contains("ratelimit.store", "ratelimit.failure-mode", "ratelimit.headers",
				"ratelimit.null-key", "ratelimit.filter.match", "ratelimit.redis.time-source",
				"ratelimit.defaults.algorithm");
	}

	@Test
	void bucketsAndFilterRulesAreTypedSoThatTheirFieldsComplete() {
		assertThat(property("ratelimit.buckets").path("type").asString())
			.isEqualTo("java.util.Map<java.lang.String," + RateLimitProperties.Bucket.class.getName() + ">");
		assertThat(property("ratelimit.filter.rules").path("type").asString())
			.isEqualTo("java.util.List<" + RateLimitProperties.Rule.class.getName() + ">");
		assertThat(hint("ratelimit.buckets.keys").path("providers").get(0).path("name").asString()).isEqualTo("any");
	}

	@Test
	void theHealthIndicatorSwitchIsListed() {
		JsonNode health = property("management.health.ratelimit.enabled");
		assertThat(health.path("type").asString()).isEqualTo("java.lang.Boolean");
		assertThat(health.path("defaultValue").asBoolean()).isTrue();
	}

	private static Class<?> typeOf(String type) throws ClassNotFoundException {
		return type.contains("<") || !type.contains(".") ? null
				: Class.forName(type, false, ConfigurationMetadataTests.class.getClassLoader());
	}

	private static JsonNode property(String name) {
		return find(metadata.path("properties"), name);
	}

	private static JsonNode hint(String name) {
		return find(metadata.path("hints"), name);
	}

	private static JsonNode find(JsonNode entries, String name) {
		for (JsonNode entry : entries) {
			if (entry.path("name").asString().equals(name)) {
				return entry;
			}
		}
		throw new AssertionError("No metadata entry " + name + " in " + Map.of("entries", entries.size()));
	}

}
