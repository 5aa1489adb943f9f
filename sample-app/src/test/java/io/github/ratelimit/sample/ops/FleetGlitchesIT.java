package io.github.ratelimit.sample.ops;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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
 * {@code CLIENT
 * KILL}, {@code SIGSTOP} for 3 s (before the burst and in the middle of it),
 * {@code DEBUG SLEEP 2}, {@code kill -9} and an empty restart, and a full outage. Each
 * scenario uses a client address of its own, so each starts on a fresh key.
 * <p>
 * Operator actions reach the fleet: a key reset through one instance lets the other admit
 * again within a second, though the other instance had remembered the key's rejection.
 * <p>
 * Everything runs on an idle machine and again with a busy thread per core. Figures are
 * printed with an {@code [fleet]} prefix.
 */
class FleetGlitchesIT {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final long LIMIT = 20;

	/** The most a window may admit across a glitch: the limit and one per instance. */
	private static final long GOAL = LIMIT + 2;

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

		assertThat(this.misses).as("scenarios over the goal of %d admitted in the window", GOAL).isEmpty();
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
		awaitRecovery(scenario);
		long recovered = System.nanoTime();
		ConnectionFirstBurst.Result after = ConnectionFirstBurst.fire(BURST, GREETING, clientIp, ports);
		long admitted = during.admitted() + after.admitted();
		String line = String.format("%s: %d admitted in the window (during: %s; after: %s); recovered after %d ms",
				scenario, admitted, during, after, TimeUnit.NANOSECONDS.toMillis(recovered - started));
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
				"--server.forward-headers-strategy=framework", "--management.endpoint.ratelimits.access=unrestricted",
				"--management.endpoint.health.show-details=always", "--spring.main.banner-mode=off");
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
