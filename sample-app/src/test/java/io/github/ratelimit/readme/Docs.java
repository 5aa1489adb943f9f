package io.github.ratelimit.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The user documentation: the README and the pages of {@code docs/}, as seen from the
 * sample app's directory, where its tests run.
 */
final class Docs {

	static final Path ROOT = Path.of("..");

	static final Path README = ROOT.resolve("README.md");

	static final Path DOCS = ROOT.resolve("docs");

	private Docs() {
	}

	/**
	 * Returns the README followed by every Markdown page of {@code docs/}, by name.
	 */
	static List<Path> pages() {
		List<Path> pages = new ArrayList<>();
		pages.add(README);
		try (Stream<Path> files = Files.list(DOCS)) {
			files.filter((file) -> file.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return pages;
	}

}
