package io.github.ratelimit.sample.ops;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fleet is one limiter also when the network is not: two sample applications, each
 * {@code java -jar} in a JVM of its own, on one {@code redis-server} this test starts,
 * with bucket {@code api} at 20 per hour (sliding log, so "admitted" is a plain count),
 * the failure mode {@code fallback} and every other setting at its default. For each
 * fault, a burst of 60 simultaneous requests spread over both instances meets it, and
 * once both instances decide on Redis again, a second burst of 60 on the same key
 * follows: the window must admit at most {@link #GOAL} in all. The faults are real:
 * {@code CLIENT KILL}, {@code SIGSTOP} for 3 s (before the burst and in the middle of
 * it), {@code DEBUG SLEEP 2}, {@code kill -9} and an empty restart, and a full outage.
 * Each scenario uses a client address of its own, so each starts on a fresh key.
 * <p>
 * Operator actions reach the fleet: a key reset through one instance lets the other admit
 * again within a second, though the other instance had remembered the key's rejection;
 * two live limit changes made at once through the two instances are both kept; health
 * knows Redis is gone within 2 s without any request. A fresh application refuses
 * anonymous writes to its {@code ratelimits} endpoint.
 * <p>
 * Everything runs on an idle machine and again with a busy thread per core. Figures are
 * printed with an {@code [fleet]} prefix.
 */
class FleetGlitchesIT {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final long LIMIT = 20;

	private static final int INSTANCES = 2;

	/**
	 * The most a window may admit across a glitch: the limit and one per instance (each
	 * enforces its share of what it heard remained, rounded). A glitch in the middle of
	 * the burst stays within it too because the calls that timed out count as taken (see
	 * docs/operations.md for the case that does not: a stale answer and nothing sent).
	 */
	private static final long GOAL = LIMIT + INSTANCES;

	private static final int BURST = 60;

	private static final String GREETING = "/api/greeting";

	/** Generous: two JVMs starting on a busy 2-core machine. */
	private static final Duration STARTUP = Duration.ofMinutes(4);

	/** Generous: Redis back, and both instances deciding on it again. */
	private static final Duration RECOVERY = Duration.ofSeconds(60);

	/** Generous bound for a reset on one instance to be honoured by the other. */
	private static final Duration RESET_BOUND = Duration.ofSeconds(10);

	private final List<SampleProcess> instances = new ArrayList<>();

	private final List<String> misses = new ArrayList<>();

	private String run = "";

	private int client;

	@AfterEach
	void stopInstancesAndRestoreRedis() {
		try {
			this.instances.forEach(SampleProcess::close);
		}
		finally {
			this.instances.clear();
			if (redis.server().isPaused()) {
				redis.server().resume();
			}
			if (!redis.server().isRunning()) {
				redis.server().start();
			}
		}
	}

	@Test
	void glitchesCostNoExtraAdmissionsOnAnIdleMachine() {
		this.run = "idle";
		scenarios();
	}

	@Test
	void aFreshAppRefusesAnonymousWritesToTheEndpoint() {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app-0.1.0-SNAPSHOT.jar"));
		try (SampleProcess fresh = SampleProcess.start(jar, "fresh", Path.of("target", "fleet-glitches"),
				List.of("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port(), "--spring.main.banner-mode=off"))) {
			fresh.awaitAnswering(STARTUP);
			assertThat(fresh.get(GREETING, "10.7.0.1")).isEqualTo(200);
			assertThat(fresh.read("/actuator/ratelimits")).contains("\"name\":\"api\"");
			assertThat(fresh.delete("/actuator/ratelimits/api/10.7.0.1")).as("a key's reset").isEqualTo(405);
			assertThat(fresh.send("POST", "/actuator/ratelimits/api", "{\"limit\": 1000}").statusCode())
				.as("a limit change")
				.isEqualTo(404);
			assertThat(fresh.send("DELETE", "/actuator/ratelimits/api", "").statusCode()).as("clearing a change")
				.isEqualTo(404);
		}
	}

	@Test
	void glitchesCostNoExtraAdmissionsOnAMachineWithABusyThreadPerCore() {
		this.run = "loaded";
		try (BusyCores busy = new BusyCores()) {
			System.out.printf("[fleet] %s: %d busy threads%n", this.run, busy.threads());
			scenarios();
		}
	}

	private void scenarios() {
		redis.server().flushAll();
		int[] ports = startInstances();
		warmUp();

		glitch("CLIENT KILL TYPE normal, mid-burst", ports, this::midBurst,
				() -> redis.server().command("CLIENT", "KILL", "TYPE", "normal"));
		glitch("kill -STOP 3 s, before the burst", ports, (burst, fault) -> {
			redis.server().pause();
			CompletableFuture<Void> resume = resumeAfter(Duration.ofSeconds(3));
			ConnectionFirstBurst.Result result = burst.get();
			resume.join();
			return result;
		}, () -> {
		});
		glitch("kill -STOP 3 s, mid-burst", ports, this::midBurst, () -> {
			redis.server().pause();
			resumeAfter(Duration.ofSeconds(3));
		});
		glitch("DEBUG SLEEP 2, mid-burst", ports, this::midBurst, () -> redis.server().sleep(Duration.ofSeconds(2)));
		glitch("kill -9 after the burst, empty restart", ports, (burst, fault) -> {
			ConnectionFirstBurst.Result result = burst.get();
			redis.server().stop();
			redis.server().start();
			return result;
		}, () -> {
		});
		glitch("outage: a burst while Redis is down, another after it is back (empty)", ports, (burst, fault) -> {
			redis.server().stop();
			ConnectionFirstBurst.Result result = burst.get();
			redis.server().start();
			return result;
		}, () -> {
		});

		resetThroughOneInstanceReachesTheOther(ports);
		concurrentLiveChangesOnTwoInstancesAreBothKept();
		healthKnowsRedisIsGoneWithoutTraffic();

		assertThat(this.misses).as("scenarios over the goal of admissions in the window").isEmpty();
	}

	/**
	 * Meets a burst of 60 with a fault, then waits until both instances decide on Redis
	 * again, and fires another burst of 60 on the same key.
	 */
	private void glitch(String scenario, int[] ports, Scenario steps, Runnable fault) {
		String clientIp = nextClient();
		long started = System.nanoTime();
		ConnectionFirstBurst.Result during = steps
			.run(() -> ConnectionFirstBurst.fire(BURST, GREETING, clientIp, ports), fault);
		String states = this.instances.stream().map(FleetGlitchesIT::state).collect(Collectors.joining("; "));
		awaitRecovery(scenario);
		long recovered = System.nanoTime();
		ConnectionFirstBurst.Result after = ConnectionFirstBurst.fire(BURST, GREETING, clientIp, ports);
		long admitted = during.admitted() + after.admitted();
		// Redis has come back: its breaker never opens again. A call may still time out
		// (100ms) on a loaded machine, which health shows as degraded, truthfully: said,
		// not a miss.
		StringBuilder afterwards = new StringBuilder();
		for (SampleProcess instance : this.instances) {
			String health = instance.rateLimitHealth();
			if (!health.startsWith("UP/") || !health.endsWith("/closed")) {
				this.misses.add(scenario + ": " + instance + " was " + health
						+ " after the burst that followed recovery (" + state(instance) + ")");
			}
			else if (!health.equals("UP/healthy/closed")) {
				afterwards.append("; ").append(instance).append(" then ").append(state(instance));
			}
		}
		String line = String.format(
				"%s: %d admitted in the window (%s the goal of %d) (during: %s; after: %s); recovered after %d ms; right after the burst: %s%s",
				scenario, admitted, (admitted <= GOAL) ? "within" : "over", GOAL, during, after,
				TimeUnit.NANOSECONDS.toMillis(recovered - started), states, afterwards);
		record(line);
		assertThat(during.count(200) + during.count(429)).as("%s: every request answered 200 or 429", scenario)
			.isEqualTo(BURST);
		assertThat(after.count(200) + after.count(429)).as("%s: every request answered 200 or 429", scenario)
			.isEqualTo(BURST);
		if (admitted > GOAL) {
			this.misses.add(line);
		}
	}

	/**
	 * Fires the burst and injects the fault once Redis has admitted its first request.
	 */
	private ConnectionFirstBurst.Result midBurst(BurstSupplier burst, Runnable fault) {
		String key = "rl:{api:" + currentClient() + "}:sl0:3600000000";
		CompletableFuture<ConnectionFirstBurst.Result> result = CompletableFuture.supplyAsync(burst::get,
				(task) -> new Thread(task, "fleet-burst").start());
		Await.until("the burst's first admission in Redis", RECOVERY,
				() -> result.isDone() || !redis.server().command("LLEN", key).equals("0"));
		fault.run();
		return result.join();
	}

	private void resetThroughOneInstanceReachesTheOther(int[] ports) {
		String clientIp = nextClient();
		SampleProcess a = this.instances.get(0);
		SampleProcess b = this.instances.get(1);
		ConnectionFirstBurst.Result exhausted = ConnectionFirstBurst.fire(BURST, GREETING, clientIp, ports);
		assertThat(exhausted.admitted()).isEqualTo(LIMIT);
		// B answers the key's rejection from its memory from now on.
		assertThat(b.get(GREETING, clientIp)).isEqualTo(429);
		assertThat(b.get(GREETING, clientIp)).isEqualTo(429);
		long reset = System.nanoTime();
		assertThat(a.delete("/actuator/ratelimits/api/" + clientIp)).isEqualTo(204);
		long deadline = reset + RESET_BOUND.toNanos();
		boolean admitted = false;
		while (!admitted && System.nanoTime() - deadline < 0) {
			admitted = b.get(GREETING, clientIp) == 200;
		}
		long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - reset);
		String line = admitted ? "reset through A, admitted again on B after " + millis + " ms"
				: "reset through A, still rejected on B after " + millis + " ms";
		record(line);
		if (!admitted || millis > 1000) {
			this.misses.add(line + ", not within 1 s");
		}
	}

	private void record(String line) {
		System.out.printf("[fleet] %s: %s%n", this.run, line);
	}

	/**
	 * Two live limit changes of one bucket at the same moment, one through each instance:
	 * both are kept, and both instances apply both.
	 */
	private void concurrentLiveChangesOnTwoInstancesAreBothKept() {
		SampleProcess a = this.instances.get(0);
		SampleProcess b = this.instances.get(1);
		int trials = 5;
		int kept = 0;
		long slowest = 0;
		for (int trial = 0; trial < trials; trial++) {
			CyclicBarrier start = new CyclicBarrier(2);
			CompletableFuture<Integer> onA = CompletableFuture.supplyAsync(() -> {
				await(start);
				return a.send("POST", "/actuator/ratelimits/search", "{\"limit\": 30, \"window\": \"1m\"}")
					.statusCode();
			}, (task) -> new Thread(task, "change-on-a").start());
			await(start);
			int onB = b.send("POST", "/actuator/ratelimits/search", "{\"burst\": 50}").statusCode();
			assertThat(onA.join()).isEqualTo(200);
			assertThat(onB).isEqualTo(200);
			long changed = System.nanoTime();
			Await.until("both changes applied on both instances", RECOVERY,
					() -> this.instances.stream().allMatch(FleetGlitchesIT::hasBothChanges));
			slowest = Math.max(slowest, System.nanoTime() - changed);
			kept++;
			assertThat(a.send("DELETE", "/actuator/ratelimits/search", "").statusCode()).isEqualTo(200);
			Await.until("the change cleared on both instances", RECOVERY, () -> this.instances.stream()
				.noneMatch((instance) -> instance.read("/actuator/ratelimits").contains("\"search\":{\"settings\"")));
		}
		record("two live changes at once on A and B, " + trials + " trials: both kept in " + kept
				+ ", applied on both instances within " + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms");
	}

	/**
	 * What an instance's health tells of its store: state, breaker, failures, instances.
	 */
	private static String state(SampleProcess instance) {
		String health = instance.read("/actuator/health/ratelimit");
		int details = health.indexOf("\"details\"");
		return (details < 0) ? health : health.substring(details);
	}

	private static boolean hasBothChanges(SampleProcess instance) {
		String listing = instance.read("/actuator/ratelimits");
		int search = listing.indexOf("\"search\":{\"settings\":{");
		if (search < 0) {
			return false;
		}
		String settings = listing.substring(search, listing.indexOf('}', search + 25));
		return settings.contains("\"limit\":\"30\"") && settings.contains("\"window\":\"1m\"")
				&& settings.contains("\"burst\":\"50\"");
	}

	/**
	 * Redis dies while no request comes: each instance's health says so within 2 s.
	 */
	private void healthKnowsRedisIsGoneWithoutTraffic() {
		long killed = System.nanoTime();
		redis.server().stop();
		long[] seen = new long[this.instances.size()];
		Await.until("both instances degraded without traffic", RECOVERY, () -> {
			boolean all = true;
			for (int i = 0; i < seen.length; i++) {
				if (seen[i] == 0 && this.instances.get(i).rateLimitHealth().contains("degraded")) {
					seen[i] = System.nanoTime() - killed;
				}
				all &= seen[i] != 0;
			}
			return all;
		});
		long slowest = TimeUnit.NANOSECONDS.toMillis(Arrays.stream(seen).max().orElseThrow());
		String line = "Redis killed without traffic: health degraded on both after " + slowest + " ms";
		record(line);
		if (slowest > 2000) {
			this.misses.add(line + ", not within 2 s");
		}
		redis.server().start();
		awaitRecovery("Redis back without traffic");
	}

	private static void await(CyclicBarrier barrier) {
		try {
			barrier.await(1, TimeUnit.MINUTES);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private CompletableFuture<Void> resumeAfter(Duration paused) {
		return CompletableFuture.runAsync(() -> {
			pause(paused.toMillis());
			redis.server().resume();
		}, (task) -> new Thread(task, "fleet-resume").start());
	}

	private void awaitRecovery(String scenario) {
		Await.until(scenario + ": both instances on Redis again", RECOVERY,
				() -> redis.server().isRunning() && !redis.server().isPaused() && this.instances.stream()
					.allMatch((instance) -> instance.rateLimitHealth().equals("UP/healthy/closed")));
	}

	private int[] startInstances() {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app-0.1.0-SNAPSHOT.jar"));
		assertThat(jar).as("the repackaged sample application (mvn package)").isRegularFile();
		Path logs = Path.of("target", "fleet-glitches");
		List<String> args = List.of("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.buckets.api.algorithm=sliding-log",
				"--ratelimit.buckets.api.limit=" + LIMIT, "--ratelimit.buckets.api.window=1h",
				"--ratelimit.client-ip.trusted-proxies=127.0.0.1",
				"--management.endpoint.ratelimits.access=unrestricted",
				"--ratelimit.endpoint.limits-write-enabled=true", "--management.endpoint.health.show-details=always",
				// What each key on the fallback started from and what was written back,
				// in the logs under target/fleet-glitches: a run over the goal says why.
				"--logging.level.io.github.ratelimit.failover.OutageFallback=debug", "--spring.main.banner-mode=off");
		for (int i = 1; i <= 2; i++) {
			this.instances.add(SampleProcess.start(jar, this.run + "-fleet-" + i, logs, args));
		}
		this.instances.forEach((instance) -> instance.awaitAnswering(STARTUP));
		return this.instances.stream().mapToInt(SampleProcess::port).toArray();
	}

	/** 100 requests on each instance, each from a client of its own. */
	private void warmUp() {
		for (int i = 0; i < 100; i++) {
			for (SampleProcess instance : this.instances) {
				assertThat(instance.get(GREETING, "10.9." + (i / 200) + "." + (i % 200 + 1))).isEqualTo(200);
			}
		}
	}

	private String nextClient() {
		this.client++;
		return currentClient();
	}

	private String currentClient() {
		return "10.8." + (this.run.equals("idle") ? 1 : 2) + "." + this.client;
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Fires the scenario's burst. */
	@FunctionalInterface
	private interface BurstSupplier {

		ConnectionFirstBurst.Result get();

	}

	/** How a scenario meets its burst with its fault. */
	@FunctionalInterface
	private interface Scenario {

		ConnectionFirstBurst.Result run(BurstSupplier burst, Runnable fault);

	}

}
