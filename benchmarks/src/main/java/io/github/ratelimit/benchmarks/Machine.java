package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * What the benchmarks ran on, read from the JVM and {@code /proc}.
 *
 * @param cpu the CPU model
 * @param cores the processors the JVM sees
 * @param memory total memory
 * @param os the operating system
 * @param jdk the JDK running the benchmarks
 * @param redis the Redis version ({@code --redis-version})
 * @param load the load average when the report was written
 * @param date the date
 * @author ratelimit-spring-boot-starter authors
 */
record Machine(String cpu, int cores, String memory, String os, String jdk, String redis, String load, String date) {

	static Machine describe(Options options) {
		String cpu = firstValue(Path.of("/proc/cpuinfo"), "model name").orElse(System.getProperty("os.arch"));
		String memory = firstValue(Path.of("/proc/meminfo"), "MemTotal").map(Machine::gibibytes).orElse("unknown");
		String load = read(Path.of("/proc/loadavg")).map((l) -> String.join(" ", List.of(l.split(" ")).subList(0, 3)))
			.orElse("unknown");
		return new Machine(cpu, Runtime.getRuntime().availableProcessors(), memory,
				System.getProperty("os.name") + " " + System.getProperty("os.version"),
				System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
				options.value("redis-version", "unknown"), load,
				ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z", Locale.ROOT)));
	}

	String oneLine() {
		return this.cores + " cores (" + this.cpu + "), " + this.memory + ", JDK " + System.getProperty("java.version")
				+ ", Redis " + this.redis + ", " + this.date;
	}

	private static String gibibytes(String memTotal) {
		long kib = Long.parseLong(memTotal.replace("kB", "").trim());
		return String.format(Locale.ROOT, "%.1f GiB", kib / 1024.0 / 1024.0);
	}

	private static java.util.Optional<String> firstValue(Path file, String name) {
		try {
			for (String line : Files.readAllLines(file)) {
				if (line.startsWith(name)) {
					return java.util.Optional.of(line.substring(line.indexOf(':') + 1).trim());
				}
			}
		}
		catch (IOException ex) {
			// Not Linux: fall back.
		}
		return java.util.Optional.empty();
	}

	private static java.util.Optional<String> read(Path file) {
		try {
			return java.util.Optional.of(Files.readString(file).trim());
		}
		catch (IOException ex) {
			return java.util.Optional.empty();
		}
	}

}
