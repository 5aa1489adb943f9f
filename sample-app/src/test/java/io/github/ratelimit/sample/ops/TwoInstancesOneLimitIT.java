package io.github.ratelimit.sample.ops;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The product's promise, one limit across every instance, tried as a user would: two
 * sample applications, each {@code java -jar} of the repackaged jar in a JVM of its own,
 * on one {@code redis-server} this test starts, hit over real HTTP by a load generator
 * that opens all its connections first and then fires every request at once
 * ({@link ConnectionFirstBurst}).
 * <p>
 * Bucket {@code api} ({@code GET /api/greeting}, keyed by client IP) is set to 20 per
 * hour, sliding log: exact, no refill, so "admitted" is a plain count. Each burst comes
 * from a client IP of its own ({@code X-Forwarded-For}, believed because the load
 * generator connects from 127.0.0.1, trusted as a proxy with
 * {@code ratelimit.client-ip.trusted-proxies}), so each starts on a fresh key. With
 * {@code ratelimit.fallback.instances=2}, each instance enforces half of every limit
 * while Redis is down.
 * <p>
 * Each scenario runs on an idle machine and again with a busy thread per core beside it:
 * right after both applications answer, 60 simultaneous requests admit exactly 20; warm,
 * three bursts of 60 and one of 200 each admit exactly 20; with Redis killed, no request
 * fails (the fallback decides: 10 per instance); with Redis back, decisions are on Redis
 * again (exactly 20, and the key is in Redis) within seconds. Figures are printed with an
 * {@code [ops]} prefix.
 */
class TwoInstancesOneLimitIT {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final long LIMIT = 20;

	private static final String GREETING = "/api/greeting";

	/** Generous: two JVMs starting on a busy 2-core machine. */
	private static final Duration STARTUP = Duration.ofMinutes(4);

	/** Generous: "within seconds", with room for a loaded machine. */
	private static final Duration RECOVERY = Duration.ofSeconds(60);

	private final List<SampleProcess> instances = new ArrayList<>();

	private int burst;

	private String run = "";

	@AfterEach
	void stopInstancesAndRestoreRedis() {
		try {
			this.instances.forEach(SampleProcess::close);
		}
		finally {
			this.instances.clear();
			if (!redis.server().isRunning()) {
				redis.server().start();
			}
		}
	}

	@Test
	void oneLimitAcrossTwoInstancesOnAnIdleMachine() {
		this.run = "idle";
		scenarios();
	}

	@Test
	void oneLimitAcrossTwoInstancesOnAMachineWithABusyThreadPerCore() {
		this.run = "loaded";
		try (BusyCores busy = new BusyCores()) {
			System.out.printf("[ops] %s: %d busy threads%n", this.run, busy.threads());
			scenarios();
		}
	}

	private void scenarios() {
		redis.server().flushAll();
		int[] ports = startInstances();

		ConnectionFirstBurst.Result cold = burst(60, ports);
		print("right after startup, 60 simultaneous", cold);
		assertExactlyTheLimit(cold);

		warmUp();
		for (int i = 1; i <= 3; i++) {
			ConnectionFirstBurst.Result warm = burst(60, ports);
			print("warm, 60 simultaneous (" + i + " of 3)", warm);
			assertExactlyTheLimit(warm);
		}
		ConnectionFirstBurst.Result warm200 = burst(200, ports);
		print("warm, 200 simultaneous", warm200);
		assertExactlyTheLimit(warm200);
		assertThat(this.instances)
			.allSatisfy((instance) -> assertThat(instance.logLines("Rate limit store 'redis' failed"))
				.as("fallback decisions of %s", instance)
				.isEmpty());

		redis.server().stop();
		ConnectionFirstBurst.Result down = burst(60, ports);
		print("Redis killed, 60 simultaneous", down);
		assertThat(down.count(200) + down.count(429)).as("answered 200 or 429, no 5xx").isEqualTo(60);
		for (int port : ports) {
			assertThat(down.admittedBy(port)).as("the fallback of the instance on port %d: half the limit", port)
				.isEqualTo(LIMIT / 2);
		}
		assertThat(this.instances).allSatisfy(
				(instance) -> assertThat(instance.rateLimitHealth()).as("health of %s", instance).contains("degraded"));

		long restarted = System.nanoTime();
		redis.server().start();
		awaitCondition("decisions on Redis again", () -> this.instances.stream()
			.allMatch((instance) -> instance.rateLimitHealth().equals("UP/healthy/closed")));
		ConnectionFirstBurst.Result back = burst(60, ports);
		System.out.printf("[ops] %s: Redis back: health healthy and breaker closed on both after %d ms%n", this.run,
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted));
		print("Redis back, 60 simultaneous", back);
		assertExactlyTheLimit(back);
		assertThat(redis.server().command("EXISTS", "rl:{api:" + clientIp(this.burst) + "}:sl0:3600000000"))
			.isEqualTo("1");
	}

	private int[] startInstances() {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app-0.1.0-SNAPSHOT.jar"));
		assertThat(jar).as("the repackaged sample application (mvn package)").isRegularFile();
		Path logs = Path.of("target", "two-instances");
		List<String> args = List.of("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.buckets.api.algorithm=sliding-log",
				"--ratelimit.buckets.api.limit=" + LIMIT, "--ratelimit.buckets.api.window=1h",
				"--ratelimit.fallback.instances=2", "--ratelimit.client-ip.trusted-proxies=127.0.0.1",
				"--management.endpoint.health.show-details=always", "--spring.main.banner-mode=off");
		long started = System.nanoTime();
		for (int i = 1; i <= 2; i++) {
			this.instances.add(SampleProcess.start(jar, this.run + "-instance-" + i, logs, args));
		}
		this.instances.forEach((instance) -> instance.awaitAnswering(STARTUP));
		System.out.printf("[ops] %s: both instances answer after %d ms%n", this.run,
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
		return this.instances.stream().mapToInt(SampleProcess::port).toArray();
	}

	/** 100 requests on each instance, each from a client of its own. */
	private void warmUp() {
		for (int i = 0; i < 100; i++) {
			for (SampleProcess instance : this.instances) {
				assertThat(instance.get(GREETING, "10.1." + (i / 200) + "." + (i % 200 + 1))).isEqualTo(200);
			}
		}
	}

	private ConnectionFirstBurst.Result burst(int requests, int[] ports) {
		this.burst++;
		return ConnectionFirstBurst.fire(requests, GREETING, clientIp(this.burst), ports);
	}

	private String clientIp(int burst) {
		return "10.0." + (this.run.equals("idle") ? 1 : 2) + "." + burst;
	}

	private static void assertExactlyTheLimit(ConnectionFirstBurst.Result result) {
		assertThat(result.count(200) + result.count(429)).as("answered 200 or 429").isEqualTo(result.statuses().length);
		assertThat(result.admitted()).as("admitted by both instances together").isEqualTo(LIMIT);
	}

	private void print(String what, ConnectionFirstBurst.Result result) {
		System.out.printf("[ops] %s: %s: %s%n", this.run, what, result);
	}

	private static void awaitCondition(String what, BooleanSupplier condition) {
		Await.until(what, RECOVERY, condition);
	}

}
