package io.github.ratelimit.readme;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Keeps the Java and Kotlin examples of the README and of every page in {@code docs/}
 * true: each one is an excerpt of a source file in this package (Kotlin: in the
 * {@code kotlin-tests} module), which the build compiles, and the quickstart example
 * limits as the README says.
 */
class DocsExamplesTests {

	private static final List<Path> EXAMPLES = List.of(Path.of("src/test/java/io/github/ratelimit/readme"),
			Path.of("../ratelimit-spring-boot-autoconfigure/src/test/java/io/github/ratelimit/readme"),
			Path.of("../ratelimit-spring-cloud-gateway/src/test/java/io/github/ratelimit/readme"));

	private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

	private static final Path KOTLIN_EXAMPLES = Path.of("../kotlin-tests/src/test/kotlin/io/github/ratelimit/kotlin");

	private static final Pattern KOTLIN_BLOCK = Pattern.compile("```kotlin\\n(.*?)```", Pattern.DOTALL);

	@Test
	void everyJavaBlockOfThePagesIsAnExcerptOfACompiledExample() throws IOException {
		Map<String, String> examples = new TreeMap<>();
		for (Path directory : EXAMPLES) {
			try (Stream<Path> files = Files.list(directory)) {
				for (Path file : files.filter((f) -> f.toString().endsWith(".java")).toList()) {
					examples.put(file.toString(), normalize(Files.readString(file)));
				}
			}
		}
		Map<Path, List<String>> blocks = blocks(JAVA_BLOCK);
		assertThat(blocks.get(Docs.README)).as("Java blocks in the README").hasSizeGreaterThanOrEqualTo(5);
		assertThat(blocks.values().stream().mapToInt(List::size).sum()).as("Java blocks in all pages")
			.isGreaterThan(blocks.get(Docs.README).size());
		assertExcerpts(blocks, examples);
	}

	@Test
	void everyKotlinBlockOfThePagesIsAnExcerptOfACompiledExample() throws IOException {
		Map<String, String> examples = new TreeMap<>();
		try (Stream<Path> files = Files.list(KOTLIN_EXAMPLES)) {
			for (Path file : files.filter((f) -> f.toString().endsWith(".kt")).toList()) {
				examples.put(file.toString(), normalize(Files.readString(file)));
			}
		}
		Map<Path, List<String>> blocks = blocks(KOTLIN_BLOCK);
		assertThat(blocks.get(Docs.README)).as("Kotlin blocks in the README").isNotEmpty();
		assertExcerpts(blocks, examples);
	}

	@Test
	void theQuickstartLoginServiceLimitsFailedAttemptsOnly() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
			.withBean(UserDirectory.class, () -> (username, password) -> password.equals("correct-horse"))
			.withBean(LoginService.class)
			.run((context) -> {
				LoginService logins = context.getBean(LoginService.class);
				assertThat(logins.login("alice", "correct-horse")).as("a success gives its permit back").isTrue();
				for (int i = 0; i < 5; i++) {
					assertThat(logins.login("bob", "wrong")).isFalse();
				}
				assertThatExceptionOfType(RateLimitExceededException.class)
					.isThrownBy(() -> logins.login("bob", "wrong"));
				for (int i = 0; i < 4; i++) {
					assertThat(logins.login("alice", "wrong")).as("alice still has her own 5").isFalse();
				}
			});
	}

	private static void assertExcerpts(Map<Path, List<String>> blocks, Map<String, String> examples) {
		blocks.forEach((page, pageBlocks) -> {
			for (String block : pageBlocks) {
				String excerpt = normalize(block);
				assertThat(examples.values().stream().anyMatch((source) -> source.contains(excerpt)))
					.as("%s block not found (whitespace aside) in any of %s:%n%s", page, examples.keySet(), block)
					.isTrue();
			}
		});
	}

	private static Map<Path, List<String>> blocks(Pattern block) throws IOException {
		Map<Path, List<String>> blocks = new TreeMap<>();
		for (Path page : Docs.pages()) {
			List<String> found = new ArrayList<>();
			Matcher matcher = block.matcher(Files.readString(page));
			while (matcher.find()) {
				found.add(matcher.group(1));
			}
			blocks.put(page, found);
		}
		return blocks;
	}

	private static String normalize(String text) {
		return text.replaceAll("\\s+", " ").trim();
	}

}
