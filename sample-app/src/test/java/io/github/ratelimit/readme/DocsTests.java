package io.github.ratelimit.readme;

import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import io.github.ratelimit.autoconfigure.RateLimitProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the README a front door and the pages of {@code docs/} true: the README stays
 * short and links every page; every link and anchor resolves; every class a page names
 * exists; the property reference is the one the configuration metadata gives, and every
 * field of a bucket and a filter rule is documented.
 * <p>
 * After changing a property or its Javadoc, regenerate the reference with
 * {@code mvn -pl sample-app -am test -Dtest=DocsTests -Dsurefire.failIfNoSpecifiedTests=false -Ddocs.write=true}.
 */
class DocsTests {

	private static final Path CONFIGURATION = Docs.DOCS.resolve("configuration.md");

	private static final String GENERATED_START = "<!-- generated from the configuration metadata: start -->";

	private static final String GENERATED_END = "<!-- generated from the configuration metadata: end -->";

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

	private static final Pattern CLASS_NAME = Pattern
		.compile("io\\.github\\.ratelimit(?:\\.[a-z][a-z0-9]*)*(?:\\.[A-Z]\\w*)?");

	@Test
	void theReadmeIsAFrontDoorThatLinksEveryPage() throws IOException {
		List<String> readme = Files.readAllLines(Docs.README);
		assertThat(readme).as("README lines").hasSizeLessThan(400);
		String text = String.join("\n", readme);
		for (Path page : Docs.pages()) {
			if (!page.equals(Docs.README)) {
				assertThat(text).as("the README links %s", page).contains("](docs/" + page.getFileName() + ")");
			}
		}
	}

	@Test
	void everyLinkAndAnchorResolves() throws IOException {
		List<String> broken = new ArrayList<>();
		Map<Path, Set<String>> anchors = new HashMap<>();
		for (Path page : Docs.pages()) {
			Matcher links = LINK.matcher(withoutCode(Files.readString(page)));
			while (links.find()) {
				String target = links.group(1);
				if (target.matches("^[a-z]+:.*")) {
					continue;
				}
				int hash = target.indexOf('#');
				String file = (hash >= 0) ? target.substring(0, hash) : target;
				Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
				if (!Files.exists(resolved)) {
					broken.add(page + ": no file " + target);
				}
				else if (hash >= 0 && !anchors.computeIfAbsent(resolved, DocsTests::anchors)
					.contains(target.substring(hash + 1))) {
					broken.add(page + ": no heading for " + target);
				}
			}
		}
		assertThat(broken).isEmpty();
	}

	@Test
	void everyClassAndPackageAPageNamesExists() throws IOException {
		List<String> missing = new ArrayList<>();
		for (Path page : Docs.pages()) {
			String text = Files.readString(page);
			if (page.getFileName().toString().equals("upgrading.md")) {
				text = withoutBeforeColumn(text);
			}
			Matcher names = CLASS_NAME.matcher(text);
			while (names.find()) {
				if (!existsInSources(names.group())) {
					missing.add(page.getFileName() + ": " + names.group());
				}
			}
		}
		assertThat(missing).isEmpty();
	}

	@Test
	void thePropertyReferenceIsGeneratedFromTheMetadata() throws IOException {
		String page = Files.readString(CONFIGURATION);
		int start = page.indexOf(GENERATED_START);
		int end = page.indexOf(GENERATED_END);
		assertThat(start).as("the generated section's start marker").isNotNegative();
		assertThat(end).as("the generated section's end marker").isGreaterThan(start);
		String generated = GENERATED_START + "\n\n" + propertyTable() + "\n";
		if (Boolean.getBoolean("docs.write")) {
			Files.writeString(CONFIGURATION, page.substring(0, start) + generated + page.substring(end));
			page = Files.readString(CONFIGURATION);
		}
		assertThat(page.substring(start, page.indexOf(GENERATED_END)))
			.as("docs/configuration.md's property table (regenerate it with -Ddocs.write=true, see DocsTests)")
			.isEqualTo(generated);
	}

	@Test
	void everyFieldOfABucketAndAFilterRuleIsDocumented() throws IOException {
		String page = Files.readString(CONFIGURATION);
		String fields = page.substring(page.indexOf("## Bucket and filter rule fields"));
		for (Class<?> type : List.of(RateLimitProperties.Bucket.class, RateLimitProperties.Rule.class)) {
			for (String property : properties(type)) {
				assertThat(fields.contains("`" + property + "`") || fields.contains("." + property))
					.as("%s's %s in %s", type.getSimpleName(), property, CONFIGURATION)
					.isTrue();
			}
		}
	}

	private static String propertyTable() throws IOException {
		StringBuilder table = new StringBuilder("| property | type | default | description |\n|---|---|---|---|\n");
		JsonNode metadata = metadata();
		Map<String, String> choices = new HashMap<>();
		for (JsonNode hint : metadata.path("hints")) {
			List<String> values = new ArrayList<>();
			hint.path("values").forEach((value) -> values.add("`" + value.path("value").asString() + "`"));
			if (!values.isEmpty()) {
				choices.put(hint.path("name").asString(), " One of " + String.join(", ", values) + ".");
			}
		}
		for (JsonNode property : metadata.path("properties")) {
			String name = property.path("name").asString();
			// The starter's endpoints too: ratelimits, and concurrency, whose name says
			// nothing of the starter (a trial missed its access property).
			if (!name.startsWith("ratelimit.") && !name.contains(".ratelimit")
					&& !name.startsWith("management.endpoint.concurrency.")) {
				continue;
			}
			String description = property.path("description").asString("");
			JsonNode deprecation = property.path("deprecation");
			if (!deprecation.isMissingNode()) {
				description = "Deprecated: " + deprecation.path("reason").asString("") + "; use `"
						+ deprecation.path("replacement").asString("") + "`. " + description;
			}
			JsonNode defaultValue = property.path("defaultValue");
			String shownDefault = defaultValue.isMissingNode() ? "" : "`" + defaultValue.asString() + "`";
			table.append("| `")
				.append(name)
				.append("` | ")
				.append(simpleType(property.path("type").asString("")))
				.append(" | ")
				.append(shownDefault)
				.append(" | ")
				.append((description.trim() + choices.getOrDefault(name, "")).replace("|", "\\|"))
				.append(" |\n");
		}
		return table.toString();
	}

	private static JsonNode metadata() throws IOException {
		for (URL file : Collections
			.list(DocsTests.class.getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = file.openStream()) {
				JsonNode node = new ObjectMapper().readTree(in);
				if (node.path("groups").toString().contains("\"ratelimit\"")) {
					return node;
				}
			}
		}
		throw new AssertionError("The starter's configuration metadata is not on the class path");
	}

	private static String simpleType(String type) {
		return "`" + type.replaceAll("[\\w.]+[.$](\\w+)", "$1").replace(",", ", ") + "`";
	}

	private static List<String> properties(Class<?> type) {
		try {
			List<String> names = new ArrayList<>();
			for (PropertyDescriptor property : Introspector.getBeanInfo(type).getPropertyDescriptors()) {
				if (property.getWriteMethod() != null) {
					names.add(property.getName().replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT));
				}
			}
			assertThat(names).as("%s's properties", type).isNotEmpty();
			return names;
		}
		catch (java.beans.IntrospectionException ex) {
			throw new AssertionError(ex);
		}
	}

	/**
	 * The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces
	 * as hyphens, a repeated heading numbered.
	 */
	private static Set<String> anchors(Path page) {
		try {
			Set<String> anchors = new HashSet<>();
			Map<String, Integer> seen = new HashMap<>();
			for (String line : withoutCode(Files.readString(page)).split("\n")) {
				Matcher heading = HEADING.matcher(line);
				if (heading.matches()) {
					String slug = heading.group(1)
						.trim()
						.toLowerCase(Locale.ROOT)
						.replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
						.replace(' ', '-');
					int count = seen.merge(slug, 1, Integer::sum);
					anchors.add((count == 1) ? slug : slug + "-" + (count - 1));
				}
			}
			return anchors;
		}
		catch (IOException ex) {
			throw new AssertionError(ex);
		}
	}

	private static String withoutCode(String markdown) {
		return markdown.replaceAll("(?s)```.*?```", "");
	}

	/**
	 * The upgrading page's tables name, in their first column, what no longer exists.
	 */
	private static String withoutBeforeColumn(String markdown) {
		return markdown.replaceAll("(?m)^\\|[^|\\n]*\\|", "|");
	}

	private static boolean existsInSources(String name) throws IOException {
		String path = name.replace('.', '/');
		try (Stream<Path> modules = Files.list(Docs.ROOT)) {
			for (Path module : modules.filter(Files::isDirectory).toList()) {
				for (String root : List.of("src/main/java/", "src/main/kotlin/")) {
					Path source = module.resolve(root + path);
					if (Files.isDirectory(source) || Files.exists(Path.of(source + ".java"))) {
						return true;
					}
				}
			}
		}
		return false;
	}

}
