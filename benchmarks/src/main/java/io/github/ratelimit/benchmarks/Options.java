package io.github.ratelimit.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.Durations;

/**
 * Command-line options: {@code --name=value} pairs after the command.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Options {

	private final Map<String, String> values = new LinkedHashMap<>();

	Options(String[] args, int from) {
		for (int i = from; i < args.length; i++) {
			String arg = args[i];
			if (!arg.startsWith("--") || arg.indexOf('=') < 0) {
				throw new IllegalArgumentException("Expected --name=value but got '" + arg + "'");
			}
			this.values.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
		}
	}

	String value(String name, String defaultValue) {
		return this.values.getOrDefault(name, defaultValue);
	}

	String required(String name) {
		String value = this.values.get(name);
		if (value == null || value.isEmpty()) {
			throw new IllegalArgumentException("--" + name + "=... is required");
		}
		return value;
	}

	int intValue(String name, int defaultValue) {
		String value = this.values.get(name);
		return (value != null) ? Integer.parseInt(value) : defaultValue;
	}

	Duration duration(String name, Duration defaultValue) {
		String value = this.values.get(name);
		return (value != null) ? Durations.parse(value) : defaultValue;
	}

	boolean quick() {
		return Boolean.parseBoolean(value("quick", "false"));
	}

	/**
	 * Returns the CSV every measurement is appended to.
	 * @return the path from {@code --csv}, {@code benchmarks/results/latest.csv} by
	 * default
	 */
	Path csv() {
		return Path.of(value("csv", "benchmarks/results/latest.csv"));
	}

}
