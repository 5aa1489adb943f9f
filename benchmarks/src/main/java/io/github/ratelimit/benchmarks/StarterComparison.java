package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * {@code http-vs-bucket4j-starter-hot} and {@code -100k}: the comparison a user makes.
 * The same small Spring MVC application ({@code benchmarks/http-app}) limited per
 * {@code X-Api-Key} header, in Redis, by our starter (a filter rule, the Redis store) and
 * by bucket4j-spring-boot-starter (its servlet filter, Bucket4j's Lettuce proxy manager),
 * and started a third time with neither limiter ({@code unlimited}), from which the p99
 * each adds is measured. One key for every request ({@code hot}) or 100,000 keys cycled
 * over, at 16 and 64 connections; each round runs the three apps in alternating order.
 * <p>
 * Before measuring, each limiter must reject the fourth request of a fresh key on
 * {@code /api/small} (3 per hour): a limiter that is not in the path would measure as the
 * fastest. The measured endpoint's limit is never reached.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class StarterComparison {

	private static final String PEER = "bucket4j-starter";

	private static final int[] KEYS = { 1, 100_000 };

	private static final int[] CONNECTIONS = { 16, 64 };

	private StarterComparison() {
	}

	static void main(Options options) throws Exception {
		Map<String, URI> apps = new LinkedHashMap<>();
		apps.put("ours", URI.create(options.required("ours")));
		apps.put(PEER, URI.create(options.required("bucket4j-starter")));
		apps.put("unlimited", URI.create(options.required("unlimited")));
		for (Map.Entry<String, URI> app : apps.entrySet()) {
			HttpComparison.awaitReady(app.getValue(), 1, Duration.ofMinutes(3));
			if (!app.getKey().equals("unlimited")) {
				checkLimits(app.getKey(), app.getValue().resolve("/api/small"));
			}
		}
		Duration trial = options.duration("trial", Duration.ofSeconds(3));
		Duration warmup = options.duration("warmup", Duration.ofSeconds(10));
		int trials = options.intValue("trials", 5);
		MachineLoad load = MachineLoad.of(options);
		for (Map.Entry<String, URI> app : apps.entrySet()) {
			// Two connections leave the JIT compiler threads some CPU on two cores.
			HttpComparison.check(app.getKey(), HttpLoad.run(app.getValue(), 2, 1000, warmup));
		}
		Duration loadWarmup = options.duration("load-warmup", LoadWarmUp.MAXIMUM);
		for (int keys : KEYS) {
			for (int connections : CONNECTIONS) {
				HttpComparison.warmUpLoad(apps, connections, keys, loadWarmup);
			}
		}
		List<Measurement> measurements = new ArrayList<>();
		for (int keys : KEYS) {
			for (int connections : CONNECTIONS) {
				String name = (keys == 1) ? "hot" : "100k";
				System.out.printf("http-vs-bucket4j-starter-%s: %d connections, %d key(s)%n", name, connections, keys);
				for (Map.Entry<String, URI> app : apps.entrySet()) {
					HttpComparison.check(app.getKey(),
							HttpLoad.run(app.getValue(), connections, keys, Duration.ofSeconds(1)));
				}
				PairedTrials pairs = PairedTrials.run(List.copyOf(apps.keySet()), trials, load, "requests/s",
						(side) -> HttpComparison.figures(HttpComparison.check(side,
								HttpLoad.run(Objects.requireNonNull(apps.get(side)), connections, keys, trial))));
				Map<String, String> impls = new LinkedHashMap<>();
				impls.put("ours", "ours");
				impls.put(PEER, PEER);
				impls.put("unlimited", "unlimited");
				List<Measurement> variant = new ArrayList<>(
						pairs.measurements("http-vs-bucket4j-starter-" + name, name + "-c" + connections, impls));
				// The unlimited app is the latency baseline, not a peer to compare with.
				variant.removeIf((m) -> m.impl().equals("unlimited") && m.metric().equals("pair-ratio"));
				measurements.addAll(variant);
			}
		}
		Measurement.append(options.csv(), measurements);
	}

	/**
	 * Sends four requests with a fresh key to an endpoint limited to 3 per hour: the
	 * first three must pass, the fourth must be rejected with 429.
	 */
	private static void checkLimits(String app, URI small) throws IOException, InterruptedException {
		HttpClient client = HttpClient.newHttpClient();
		String key = "check-" + UUID.randomUUID();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			HttpRequest request = HttpRequest.newBuilder(small)
				.header(HttpLoad.KEY_HEADER, key)
				.timeout(Duration.ofSeconds(30))
				.build();
			statuses.add(client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode());
		}
		if (!statuses.equals(List.of(200, 200, 200, 429))) {
			throw new IllegalStateException(app + " does not limit: 4 requests to " + small
					+ " limited to 3 per hour per " + HttpLoad.KEY_HEADER + " answered " + statuses
					+ ", expected [200, 200, 200, 429]; check its profile in benchmarks/http-app");
		}
		System.out.printf("  %s limits: %s answered %s%n", app, small, statuses);
	}

}
