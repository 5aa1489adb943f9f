package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * {@code http-overhead-memory} and {@code http-overhead-redis}: the sample app's limited
 * endpoint {@code /api/greeting} (filter rule, sliding window counter keyed by client IP,
 * a limit never reached) against the same endpoint of the same app started with
 * {@code --ratelimit.enabled=false}. The apps run side by side (run.sh starts them); the
 * trials rotate between them so drift hits all alike.
 * <p>
 * Two loads per app, after a warm-up: {@code c16}, 16 connections back to back
 * (throughput, and latency under saturation; every request has the same client IP, so all
 * 16 contend for one key), and {@code c1}, one connection (the latency of a request on an
 * otherwise idle server: what limiting adds to each request). Each round runs every app
 * once, in alternating order; a ratio is the median of the rounds' ratios.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class HttpComparison {

	private HttpComparison() {
	}

	static void main(Options options) throws Exception {
		Map<String, URI> apps = new LinkedHashMap<>();
		apps.put("unlimited", URI.create(options.required("unlimited")));
		apps.put("memory", URI.create(options.required("limited-memory")));
		String redis = options.value("limited-redis", "");
		if (!redis.isEmpty()) {
			apps.put("redis", URI.create(redis));
		}
		for (URI url : apps.values()) {
			awaitReady(url, 0, Duration.ofMinutes(3));
		}
		Duration trial = options.duration("trial", Duration.ofSeconds(3));
		Duration warmup = options.duration("warmup", Duration.ofSeconds(10));
		int trials = options.intValue("trials", 5);
		int connections = options.intValue("connections", 16);
		List<Measurement> measurements = new ArrayList<>();
		// Warm up at a concurrency that leaves the JIT compiler threads some CPU: on two
		// cores, 16 busy connections starve them and the warm-up never ends.
		for (Map.Entry<String, URI> app : apps.entrySet()) {
			check(app.getKey(), HttpLoad.run(app.getValue(), 2, warmup));
		}
		Duration loadWarmup = options.duration("load-warmup", LoadWarmUp.MAXIMUM);
		for (int c : new int[] { connections, 1 }) {
			warmUpLoad(apps, c, 0, loadWarmup);
		}
		MachineLoad load = MachineLoad.of(options);
		for (int c : new int[] { connections, 1 }) {
			for (Map.Entry<String, URI> app : apps.entrySet()) {
				check(app.getKey(), HttpLoad.run(app.getValue(), c, Duration.ofSeconds(1)));
			}
			int connectionCount = c;
			PairedTrials pairs = PairedTrials.run(List.copyOf(apps.keySet()), trials, load, "requests/s",
					(name) -> figures(
							check(name, HttpLoad.run(Objects.requireNonNull(apps.get(name)), connectionCount, trial))));
			for (String name : apps.keySet()) {
				if (!name.equals("unlimited")) {
					Map<String, String> impls = new LinkedHashMap<>();
					impls.put(name, "ours");
					impls.put("unlimited", "unlimited");
					measurements.addAll(pairs.measurements("http-overhead-" + name, "c" + c, impls));
				}
			}
		}
		Measurement.append(options.csv(), measurements);
	}

	/**
	 * Runs one of the measured loads on every app, unmeasured, in one-second trials until
	 * its throughput levels off ({@link LoadWarmUp}) or {@code maximum} has passed. The
	 * first warm-up, at two connections, leaves the compiler CPU but not the code paths
	 * of 16 or 64 connections on one key or many: before this pass, the variant measured
	 * first ran while its apps still recompiled (hundreds of methods deoptimized and
	 * compiled again in a fresh JVM), at about half its later throughput, and the two
	 * runs of a comparison disagreed by that much.
	 * @param apps the apps by name
	 * @param connections the load's connections
	 * @param keys the load's keys (0 for none)
	 * @param maximum the longest warm-up, per app
	 */
	static void warmUpLoad(Map<String, URI> apps, int connections, int keys, Duration maximum)
			throws InterruptedException {
		for (Map.Entry<String, URI> app : apps.entrySet()) {
			List<Double> throughputs = new ArrayList<>();
			long deadline = System.nanoTime() + maximum.toNanos();
			do {
				throughputs
					.add(check(app.getKey(), HttpLoad.run(app.getValue(), connections, keys, Duration.ofSeconds(1)))
						.requestsPerSecond());
			}
			while (!LoadWarmUp.levelled(throughputs) && System.nanoTime() < deadline);
			System.out.printf(Locale.ROOT, "  warm-up %s, %d connections, %d key(s): %d s%s, last %.0f requests/s%n",
					app.getKey(), connections, keys, throughputs.size(),
					LoadWarmUp.levelled(throughputs) ? "" : " (still climbing at the limit)",
					throughputs.get(throughputs.size() - 1));
		}
	}

	/**
	 * Returns a run's throughput, p50 and p99.
	 * @param result the run
	 * @return its figures
	 */
	static PairedTrials.Figures figures(HttpLoad.Result result) {
		Map<String, Double> figures = new LinkedHashMap<>();
		figures.put("throughput", result.requestsPerSecond());
		figures.put("p50", result.percentileMillis(50));
		figures.put("p99", result.percentileMillis(99));
		return new PairedTrials.Figures(figures);
	}

	static HttpLoad.Result check(String app, HttpLoad.Result result) {
		if (result.errors() > 0) {
			throw new IllegalStateException(app + ": " + result.errors() + " failed request(s), first: "
					+ result.firstError() + " (a 429 means the benchmark limit is too low)");
		}
		return result;
	}

	/**
	 * Waits until {@code url} answers 200 to requests with an
	 * {@value HttpLoad#KEY_HEADER} header cycling over {@code keys} values (none if 0).
	 */
	static void awaitReady(URI url, int keys, Duration timeout) throws InterruptedException, IOException {
		long deadline = System.nanoTime() + timeout.toNanos();
		String last = "";
		while (System.nanoTime() < deadline) {
			HttpLoad.Result probe = HttpLoad.run(url, 1, keys, Duration.ofMillis(200));
			if (probe.errors() == 0 && probe.latenciesMicros().length > 0) {
				return;
			}
			last = probe.firstError();
			Thread.sleep(500);
		}
		throw new IOException(url + " did not answer 200 within " + timeout + ": " + last);
	}

}
