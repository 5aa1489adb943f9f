package io.github.ratelimit.sample.ops;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Metered usage across instances, tried as a user would: two {@code java -jar} sample
 * applications on one {@code redis-server}, and streamed "LLM" completions
 * ({@code POST /v1/completions}) over real HTTP, each reserving its {@code maxTokens} and
 * settling the tokens it really streamed ({@code @RateLimited(settle = ...)} on a
 * {@code Flux}).
 * <p>
 * The quota bucket {@code llm-quota} counts by the calendar year instead of the month (in
 * Berlin, the test's keys' zone), so that no window ends during the test (unless it runs
 * across New Year's midnight there) and what it charged is its limit minus what remains.
 * Then:
 * <ul>
 * <li>60 concurrent completions over both instances, with random {@code maxTokens} and
 * random lengths (some using more than they reserved): the tokens the quota charged
 * equal, exactly, the tokens the clients received; and the per-minute bucket
 * {@code llm-tokens} admitted no more than its capacity plus what refilled meanwhile and
 * what completions that used less than they reserved gave back, answering the rest with
 * 429.</li>
 * <li>Slow completions on one instance, which is then killed with {@code kill -9} in the
 * middle of them: the quota keeps every open reservation charged at its estimate, and
 * what completed elsewhere at what it used.</li>
 * </ul>
 * Figures are printed with an {@code [ops]} prefix.
 */
class MeteredTokensIT {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final long QUOTA = 1_000_000;

	private static final long PER_MINUTE = 6_000;

	/** Generous: two JVMs starting on a busy 2-core machine. */
	private static final Duration STARTUP = Duration.ofMinutes(4);

	private static final Pattern TOKENS = Pattern.compile("\"tokens\":(\\d+)");

	private static final Pattern REMAINING = Pattern.compile("\"remaining\":(\\d+)");

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(20))
		.build();

	private final List<SampleProcess> instances = new ArrayList<>();

	@AfterEach
	void stopInstances() {
		this.instances.forEach(SampleProcess::close);
		this.instances.clear();
	}

	@Test
	void tokensChargedEqualTokensUsedAcrossInstancesAndAKilledInstanceKeepsItsReservations() {
		redis.server().flushAll();
		// The first instance streams slowly (at least 150 chunks, one every 20 ms: 3 s
		// or more), so that its completions are still open when it is killed; the second
		// quickly.
		SampleProcess slow = start("slow", "20ms", 150);
		SampleProcess fast = start("fast", "2ms", 1);
		this.instances.forEach((instance) -> instance.awaitAnswering(STARTUP));

		long started = System.nanoTime();
		List<CompletableFuture<Completion>> calls = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			int maxTokens = 50 + ThreadLocalRandom.current().nextInt(250);
			calls.add(complete((i % 2 == 0) ? fast : slow, "metered", maxTokens));
		}
		List<Completion> done = calls.stream().map(CompletableFuture::join).toList();
		double seconds = (System.nanoTime() - started) / 1e9;
		long used = done.stream().filter(Completion::admitted).mapToLong(Completion::used).sum();
		long reserved = done.stream().filter(Completion::admitted).mapToLong(Completion::estimate).sum();
		// What completions that used less than they reserved gave back when they settled:
		// those tokens admit later completions of the burst too.
		long givenBack = done.stream()
			.filter(Completion::admitted)
			.mapToLong((call) -> Math.max(0, call.estimate() - call.used()))
			.sum();
		long admitted = done.stream().filter(Completion::admitted).count();
		long rejected = done.stream().filter((call) -> call.status() == 429).count();
		long charged = QUOTA - remaining(fast, "llm-quota", "metered");
		System.out
			.printf("[ops] 60 concurrent streamed completions over 2 instances in %.1f s: %d admitted, %d answered 429;"
					+ " %d tokens reserved, %d given back unused, %d streamed to the clients, %d charged to the"
					+ " quota%n", seconds, admitted, rejected, reserved, givenBack, used, charged);
		assertThat(done).allSatisfy((call) -> assertThat(call.status()).isIn(200, 429));
		assertThat(done).filteredOn(Completion::admitted).allSatisfy((call) -> assertThat(call.complete()).isTrue());
		assertThat(charged).as("tokens charged to the quota, summed over both instances").isEqualTo(used);
		assertThat(rejected).as("the per-minute limit rejected some").isPositive();
		// Reserved within the capacity, its refill, and what settlements gave back
		// meanwhile
		// (at most all of it): a full build saw 7,325 reserved where the capacity and its
		// refill were 6,517, the fast instance's completions having given back 877 before
		// the burst's last admissions.
		assertThat(reserved).as("reserved within the per-minute capacity, its refill and the tokens given back")
			.isLessThanOrEqualTo(PER_MINUTE + (long) Math.ceil(seconds * PER_MINUTE / 60.0) + givenBack);

		// Slow completions on one instance, killed in the middle of them.
		long opened = System.nanoTime();
		List<CompletableFuture<Completion>> open = new ArrayList<>();
		long[] estimates = new long[8];
		long allowedBefore = allowed(slow, "llm-quota");
		for (int i = 0; i < estimates.length; i++) {
			estimates[i] = 100 + 10 * i;
			open.add(complete(slow, "killed", estimates[i]));
		}
		Await.until("the slow instance reserved all 8 completions", Duration.ofSeconds(60),
				() -> allowed(slow, "llm-quota") == allowedBefore + estimates.length);
		long killedAt = System.nanoTime();
		slow.killHard();
		List<Completion> cut = open.stream().map(CompletableFuture::join).toList();
		long keptOpen = 0;
		long settled = 0;
		for (int i = 0; i < cut.size(); i++) {
			if (cut.get(i).complete()) {
				settled += cut.get(i).used();
			}
			else {
				keptOpen += estimates[i];
			}
		}
		long chargedAfterKill = QUOTA - remaining(fast, "llm-quota", "killed");
		System.out.printf(
				"[ops] kill -9 of the slow instance %d ms after 8 completions started there: %d still open, charged"
						+ " %d (their estimates %d, plus %d used by those that completed)%n",
				TimeUnit.NANOSECONDS.toMillis(killedAt - opened), cut.stream().filter((c) -> !c.complete()).count(),
				chargedAfterKill, keptOpen, settled);
		assertThat(keptOpen).as("completions cut by the kill").isPositive();
		assertThat(chargedAfterKill).as("open reservations stay charged at their estimates")
			.isEqualTo(keptOpen + settled);
	}

	private SampleProcess start(String name, String chunkDelay, int minWords) {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app-0.1.0-SNAPSHOT.jar"));
		assertThat(jar).as("the repackaged sample application (mvn package)").isRegularFile();
		SampleProcess instance = SampleProcess.start(jar, "metered-" + name, Path.of("target", "metered-tokens"),
				List.of("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port(), "--sample.llm.chunk-delay=" + chunkDelay,
						"--sample.llm.min-words=" + minWords, "--ratelimit.buckets.llm-requests.limit=1000",
						"--ratelimit.buckets.llm-tokens.limit=" + PER_MINUTE,
						"--ratelimit.buckets.llm-quota.calendar=year", "--ratelimit.buckets.llm-quota.limit=" + QUOTA,
						"--spring.main.banner-mode=off"));
		this.instances.add(instance);
		return instance;
	}

	/** Streams one completion; a stream cut short by a killed server is not complete. */
	private static CompletableFuture<Completion> complete(SampleProcess instance, String apiKey, long maxTokens) {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + instance.port() + "/v1/completions"))
			.header("Content-Type", "application/json")
			.header("X-Api-Key", apiKey)
			.timeout(Duration.ofSeconds(120))
			.POST(HttpRequest.BodyPublishers
				.ofString("{\"prompt\":\"count the tokens\",\"maxTokens\":" + maxTokens + "}"))
			.build();
		return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString()).handle((response, failure) -> {
			if (failure != null) {
				Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
				if (cause instanceof IOException) {
					return new Completion(200, maxTokens, 0, false);
				}
				throw new CompletionException(cause);
			}
			long used = 0;
			Matcher tokens = TOKENS.matcher(response.body());
			while (tokens.find()) {
				used += Long.parseLong(tokens.group(1));
			}
			return new Completion(response.statusCode(), maxTokens, used, true);
		});
	}

	/** The requests a bucket allowed on an instance, from the endpoint's listing. */
	private static long allowed(SampleProcess instance, String bucket) {
		String json = instance.read("/actuator/ratelimits");
		Matcher allowed = Pattern.compile("\"name\":\"" + bucket + "\".*?\"allowed\":(\\d+)", Pattern.DOTALL)
			.matcher(json);
		assertThat(allowed.find()).as("bucket %s in %s", bucket, json).isTrue();
		return Long.parseLong(allowed.group(1));
	}

	private static long remaining(SampleProcess instance, String bucket, String key) {
		String json = instance.read("/actuator/ratelimits/" + bucket + "/" + key);
		Matcher remaining = REMAINING.matcher(json);
		assertThat(remaining.find()).as("remaining in %s", json).isTrue();
		return Long.parseLong(remaining.group(1));
	}

	/**
	 * One call as its client saw it.
	 *
	 * @param status the response's status
	 * @param estimate the {@code maxTokens} it reserved
	 * @param used the tokens it streamed
	 * @param complete whether the stream ended normally
	 */
	private record Completion(int status, long estimate, long used, boolean complete) {

		boolean admitted() {
			return this.status == 200;
		}

	}

}
