package io.github.ratelimit.sample.ops;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrency limits across instances, tried as a user would: three {@code java -jar}
 * sample applications on one {@code redis-server}, whose {@code POST
 * /v1/exports/{tenant}} allows 5 exports per tenant in flight
 * ({@code @ConcurrencyLimited}, lease 3 s here, waiting up to 30 s for a slot), and a
 * renderer in this JVM that takes 500 ms per export and counts, itself, how many it
 * renders at once. Then:
 * <ul>
 * <li>two bursts of 100 concurrent exports spread over the three instances: every one
 * answered, never more than 5 rendering at once; then 120 of four tenants at once, never
 * more than 5 of a tenant;</li>
 * <li>a filter rule with a rate limit (40 an hour) and a concurrency limit (3) of one
 * bucket, decided in one store call per request: waves of 9 at once until the hour's are
 * spent admit exactly 40, never more than 3 rendering at once;</li>
 * <li>{@code kill -9} of an instance whose 5 exports hang in the renderer: the other
 * instances see its permits come back within the lease and a second;</li>
 * <li>an operator's release of a key on one instance ({@code DELETE
 * /actuator/concurrency/exports/{tenant}}), seen at once on another, and the holder told
 * its releases came late;</li>
 * <li>steady load on the two left while one is stopped with {@code SIGSTOP} for longer
 * than its lease, then resumed, then while Redis sleeps 2 s ({@code DEBUG SLEEP}) and
 * drops every client ({@code CLIENT KILL}): still never more than 5 rendering at
 * once.</li>
 * </ul>
 * Figures are printed with an {@code [ops]} prefix.
 */
class ConcurrencyAcrossInstancesIT {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final Duration STARTUP = Duration.ofMinutes(4);

	private static final Duration LEASE = Duration.ofSeconds(3);

	private static final Pattern IN_FLIGHT = Pattern.compile("\"inFlight\":(\\d+)");

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(20))
		.executor(Executors.newCachedThreadPool())
		.build();

	private final List<SampleProcess> instances = new ArrayList<>();

	private final Renderer renderer = new Renderer();

	@BeforeEach
	void startRenderer() throws IOException {
		this.renderer.start();
	}

	@AfterEach
	void stop() {
		this.instances.forEach(SampleProcess::close);
		this.renderer.stop();
	}

	@Test
	void neverMoreThanThePermitsInFlightAndPermitsOfADeadOrFrozenInstanceComeBack() throws Exception {
		redis.server().flushAll();
		for (String name : List.of("a", "b", "c")) {
			start(name);
		}
		this.instances.forEach((instance) -> instance.awaitAnswering(STARTUP));

		for (String burst : List.of("cold", "warm")) {
			String tenant = "burst-" + burst;
			long started = System.nanoTime();
			List<CompletableFuture<Integer>> calls = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				calls.add(export(this.instances.get(i % 3), tenant));
			}
			List<Integer> statuses = calls.stream().map(CompletableFuture::join).toList();
			System.out.printf(
					"[ops] %s burst of 100 concurrent exports over 3 instances in %.1f s: %d answered 200, %d 429, %d"
							+ " other; the renderer had at most %d in flight%n",
					burst, (System.nanoTime() - started) / 1e9, count(statuses, 200), count(statuses, 429),
					statuses.size() - count(statuses, 200) - count(statuses, 429), this.renderer.most(tenant));
			// What each instance's limiter did: a store failure is decided by the failure
			// mode.
			for (SampleProcess instance : this.instances) {
				System.out.printf("[ops]   %s: %s%n", instance, instance.read("/actuator/concurrency"));
			}
			assertThat(statuses).as("every export answered, within its 30 s wait").containsOnly(200);
			assertThat(this.renderer.most(tenant)).as("exports in flight, counted by the renderer").isEqualTo(5);
		}

		// Four tenants at once: on one Redis, each instance sends the permits of every
		// tenant taken and given back at once in one script call; each tenant keeps its
		// own 5.
		List<String> tenants = List.of("mixed-1", "mixed-2", "mixed-3", "mixed-4");
		long mixedStarted = System.nanoTime();
		List<CompletableFuture<Integer>> mixed = new ArrayList<>();
		for (int i = 0; i < 120; i++) {
			mixed.add(export(this.instances.get(i % 3), tenants.get(i % 4)));
		}
		List<Integer> mixedStatuses = mixed.stream().map(CompletableFuture::join).toList();
		System.out.printf(
				"[ops] 120 concurrent exports of 4 tenants over 3 instances in %.1f s: %d answered 200; the renderer"
						+ " had at most %s in flight per tenant%n",
				(System.nanoTime() - mixedStarted) / 1e9, count(mixedStatuses, 200),
				tenants.stream().map(this.renderer::most).toList());
		assertThat(mixedStatuses).as("every export answered, within its 30 s wait").containsOnly(200);
		for (String tenant : tenants) {
			assertThat(this.renderer.most(tenant)).as("exports of " + tenant + " in flight, counted by the renderer")
				.isEqualTo(5);
		}

		// A filter rule with a rate limit and a concurrency limit of one bucket: each
		// request's
		// permit and decision in one store call. Waves of 9 at once over the three
		// instances
		// until the hour's 40 are spent: never more than 3 rendering, exactly 40
		// admitted.
		String ruleTenant = "rule-1";
		int admitted = 0;
		int refusedInFlight = 0;
		int refusedRate = 0;
		long ruleStarted = System.nanoTime();
		for (int wave = 0; wave < 60; wave++) {
			List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
			for (int i = 0; i < 9; i++) {
				calls.add(exportAnswer(this.instances.get(i % 3), ruleTenant));
			}
			int admittedThisWave = 0;
			for (CompletableFuture<HttpResponse<String>> call : calls) {
				HttpResponse<String> answer = call.join();
				if (answer.statusCode() == 200) {
					admittedThisWave++;
				}
				else {
					assertThat(answer.statusCode()).as(answer.body()).isEqualTo(429);
					if (answer.body().contains("\"violated-policies\":[\"export-requests-concurrency\"]")) {
						refusedInFlight++;
					}
					else {
						assertThat(answer.body()).contains("\"violated-policies\":[\"export-requests\"]");
						refusedRate++;
					}
				}
			}
			admitted += admittedThisWave;
			if (admittedThisWave == 0) {
				break;
			}
		}
		System.out.printf(
				"[ops] one rule with 40 an hour and 3 in flight, waves of 9 over 3 instances in %.1f s: %d admitted,"
						+ " %d refused for lack of a permit, %d by the rate limit; the renderer had at most %d in"
						+ " flight%n",
				(System.nanoTime() - ruleStarted) / 1e9, admitted, refusedInFlight, refusedRate,
				this.renderer.most(ruleTenant));
		assertThat(admitted).as("admitted by the rule's rate limit").isEqualTo(40);
		assertThat(this.renderer.most(ruleTenant)).as("in flight, counted by the renderer").isBetween(1, 3);
		assertThat(refusedInFlight).as("refused for lack of a permit").isPositive();
		assertThat(refusedRate).as("refused by the rate limit").isPositive();

		// Five exports hang in the renderer; their instance dies.
		SampleProcess doomed = this.instances.get(0);
		List<CompletableFuture<Integer>> hanging = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			hanging.add(export(doomed, "held"));
		}
		Await.until("5 exports hanging in the renderer", Duration.ofSeconds(60),
				() -> this.renderer.inFlight("held") == 5);
		assertThat(inFlight(this.instances.get(1), "held")).isEqualTo(5);
		long killed = System.nanoTime();
		doomed.killHard();
		Await.until("the dead instance's permits back", Duration.ofSeconds(60),
				() -> inFlight(this.instances.get(1), "held") == 0);
		long back = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
		this.renderer.release();
		hanging.forEach(CompletableFuture::join);
		System.out.printf("[ops] kill -9 of an instance holding 5 permits: back after %d ms (lease %d ms)%n", back,
				LEASE.toMillis());
		assertThat(back).as("ms until the permits came back").isLessThanOrEqualTo(LEASE.toMillis() + 1000);

		// An operator takes a key's permits back through one instance; another sees it.
		SampleProcess holder = this.instances.get(1);
		SampleProcess operator = this.instances.get(2);
		List<CompletableFuture<Integer>> heldOn = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			heldOn.add(export(holder, "held-again"));
		}
		Await.until("5 exports hanging in the renderer", Duration.ofSeconds(60),
				() -> this.renderer.inFlight("held-again") == 5);
		String released = operator.send("DELETE", "/actuator/concurrency/exports/held-again", "").body();
		int seen = inFlight(operator, "held-again");
		this.renderer.release();
		heldOn.forEach(CompletableFuture::join);
		System.out.printf("[ops] operator release through another instance: %s; in flight then: %d%n", released, seen);
		assertThat(released).contains("\"key\":\"held-again\",\"released\":5");
		assertThat(seen).isZero();
		Await.until("the holder told its 5 releases came late", Duration.ofSeconds(60),
				() -> holder.read("/actuator/concurrency").contains("\"releasedLate\":5"));

		// Steady load on the two left, one of which is frozen for longer than its lease.
		List<SampleProcess> live = this.instances.subList(1, 3);
		AtomicBoolean running = new AtomicBoolean(true);
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		List<CompletableFuture<Void>> clients = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			SampleProcess instance = live.get(i % 2);
			clients.add(CompletableFuture.runAsync(() -> {
				while (running.get()) {
					int status = export(instance, "steady").join();
					statuses.computeIfAbsent(status, (s) -> new AtomicInteger()).incrementAndGet();
				}
			}, Executors.newSingleThreadExecutor()));
		}
		Thread.sleep(3000);
		SampleProcess frozen = live.get(1);
		frozen.signal("STOP");
		try {
			Thread.sleep(LEASE.toMillis() + 2000);
		}
		finally {
			frozen.signal("CONT");
		}
		Thread.sleep(3000);
		// Redis stalls for 2 s, then drops every client's connection.
		redis.server().sleep(Duration.ofSeconds(2)).join();
		Thread.sleep(1000);
		redis.server().command("CLIENT", "KILL", "TYPE", "normal");
		Thread.sleep(3000);
		running.set(false);
		clients.forEach(CompletableFuture::join);
		String late = frozen.logLines("whose lease had ended").isEmpty() ? "no"
				: frozen.logLines("whose lease had ended").size() + "";
		System.out.printf(
				"[ops] steady load on 2 instances, one stopped (SIGSTOP) for %d ms then resumed, then DEBUG SLEEP 2"
						+ " and CLIENT KILL: statuses %s; the renderer had at most %d in flight; the resumed instance"
						+ " logged %s late releases%n",
				LEASE.toMillis() + 2000, statuses, this.renderer.most("steady"), late);
		assertThat(this.renderer.most("steady")).as("exports in flight, counted by the renderer")
			.isLessThanOrEqualTo(5);
		assertThat(statuses.keySet()).as("every export answered").isSubsetOf(200, 429, 500);
	}

	private SampleProcess start(String name) {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app-0.1.0-SNAPSHOT.jar"));
		assertThat(jar).as("the repackaged sample application (mvn package)").isRegularFile();
		SampleProcess instance = SampleProcess
			.start(jar, "concurrency-" + name, Path.of("target", "concurrency-across-instances"), List.of(
					"--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--sample.exports.renderer-url=" + this.renderer.url(),
					"--ratelimit.concurrency.exports.lease=" + LEASE.toSeconds() + "s",
					// The sample's rule, and one with both limits on some tenants'
					// exports (a list on the command line replaces the file's).
					"--ratelimit.filter.rules[0].bucket=api", "--ratelimit.filter.rules[0].paths=/api/greeting",
					"--ratelimit.filter.rules[0].methods=GET", "--ratelimit.filter.rules[0].key=#clientIp",
					"--ratelimit.filter.rules[1].bucket=export-requests",
					"--ratelimit.filter.rules[1].paths=/v1/exports/rule-*", "--ratelimit.filter.rules[1].methods=POST",
					"--ratelimit.filter.rules[1].key=#request.requestURI",
					"--ratelimit.filter.rules[1].algorithm=sliding-log", "--ratelimit.filter.rules[1].limit=40",
					"--ratelimit.filter.rules[1].window=1h", "--ratelimit.filter.rules[1].concurrency=3",
					"--management.endpoint.concurrency.access=unrestricted", "--spring.main.banner-mode=off"));
		this.instances.add(instance);
		return instance;
	}

	private static CompletableFuture<Integer> export(SampleProcess instance, String tenant) {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + instance.port() + "/v1/exports/" + tenant))
			.timeout(Duration.ofSeconds(120))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		return HTTP.sendAsync(request, HttpResponse.BodyHandlers.discarding())
			.thenApply(HttpResponse::statusCode)
			.exceptionally((failure) -> -1);
	}

	private static CompletableFuture<HttpResponse<String>> exportAnswer(SampleProcess instance, String tenant) {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + instance.port() + "/v1/exports/" + tenant))
			.timeout(Duration.ofSeconds(120))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString());
	}

	private static int inFlight(SampleProcess instance, String tenant) {
		Matcher matcher = IN_FLIGHT.matcher(instance.read("/actuator/concurrency/exports/" + tenant));
		assertThat(matcher.find()).isTrue();
		return Integer.parseInt(matcher.group(1));
	}

	private static int count(List<Integer> statuses, int status) {
		return (int) statuses.stream().filter((s) -> s == status).count();
	}

	/**
	 * The expensive renderer: 500 ms per export (tenant {@code held}: until released),
	 * counting per tenant how many it renders at once.
	 */
	static final class Renderer {

		private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> most = new ConcurrentHashMap<>();

		private volatile CountDownLatch held = new CountDownLatch(1);

		private HttpServer server;

		void start() throws IOException {
			this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
			this.server.setExecutor(Executors.newCachedThreadPool());
			this.server.createContext("/render", (exchange) -> {
				String tenant = exchange.getRequestURI().getQuery().substring("tenant=".length());
				int now = this.inFlight.computeIfAbsent(tenant, (t) -> new AtomicInteger()).incrementAndGet();
				this.most.computeIfAbsent(tenant, (t) -> new AtomicInteger()).accumulateAndGet(now, Math::max);
				try {
					if (tenant.startsWith("held")) {
						this.held.await(120, TimeUnit.SECONDS);
					}
					else {
						Thread.sleep(500);
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					this.inFlight.get(tenant).decrementAndGet();
				}
				byte[] body = ("rendered " + tenant).getBytes(StandardCharsets.UTF_8);
				exchange.sendResponseHeaders(200, body.length);
				exchange.getResponseBody().write(body);
				exchange.close();
			});
			this.server.start();
		}

		String url() {
			return "http://127.0.0.1:" + this.server.getAddress().getPort() + "/render";
		}

		int inFlight(String tenant) {
			return this.inFlight.getOrDefault(tenant, new AtomicInteger()).get();
		}

		int most(String tenant) {
			return this.most.getOrDefault(tenant, new AtomicInteger()).get();
		}

		/** Answers the exports held so far; later ones are held again. */
		void release() {
			CountDownLatch released = this.held;
			this.held = new CountDownLatch(1);
			released.countDown();
		}

		void stop() {
			this.held.countDown();
			this.server.stop(0);
		}

	}

}
