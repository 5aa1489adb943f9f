package io.github.ratelimit.benchmarks;

import java.util.Arrays;

/**
 * Entry point of the benchmarks; {@code benchmarks/run.sh} calls it once per step. <pre>
 * memory         JMH: in-memory store vs Bucket4j local and Resilience4j (1 and 2 threads)
 * redis          Redis store vs plain Lettuce EVALSHA and Bucket4j Lettuce  --redis-port=N
 * redis-memory   Redis bytes per key per algorithm at 100,000 keys          --redis-port=N
 * redis-clients  Redis store on Lettuce vs on Jedis, one hot key            --redis-port=N
 * redis-concurrency  concurrency limit vs Redisson RPermitExpirableSemaphore, 1 and 100,000 keys
 * redis-rate-and-concurrency  rate and concurrency of one bucket: one script call vs two
 *                [--redis-port=N; without it, starts a redis-server of its own] (ConcurrencyComparison)
 * http           sample app limited vs unlimited                            --limited=URL --unlimited=URL ...
 * http-starter   http-app: our starter vs bucket4j-spring-boot-starter      --ours=URL --bucket4j-starter=URL --unlimited=URL
 * report         results/latest.csv to results/latest.md, RATIO lines and docs/throughput.svg
 * pictures       docs/algorithms.svg from the core algorithms
 * </pre> Every command takes {@code --quick=true} for short runs, {@code --csv=PATH} and
 * {@code --own-root=PID} (the process whose tree is the benchmark's own, for
 * {@link MachineLoad}) and {@code --busy-cores=C} (other processes' CPU above which a
 * round is busy: left out of the ratios, and counted by {@code report}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Main {

	private Main() {
	}

	/**
	 * Runs one command.
	 * @param args the command and its {@code --name=value} options
	 * @throws Exception when the command fails
	 */
	public static void main(String[] args) throws Exception {
		if (args.length == 0) {
			throw new IllegalArgumentException(
					"Usage: Main memory|redis|redis-memory|redis-clients|redis-concurrency|redis-rate-and-concurrency|http|http-starter|report|pictures [--name=value ...]; args were "
							+ Arrays.toString(args));
		}
		Options options = new Options(args, 1);
		switch (args[0]) {
			case "memory":
				MemoryComparison.main(options);
				break;
			case "redis":
				RedisComparison.main(options);
				break;
			case "redis-memory":
				RedisMemoryPerKey.main(options);
				break;
			case "redis-clients":
				RedisClientPaths.main(options);
				break;
			case "redis-concurrency":
				ConcurrencyComparison.main(options);
				break;
			case "redis-rate-and-concurrency":
				ConcurrencyComparison.mainBoth(options);
				break;
			case "http":
				HttpComparison.main(options);
				break;
			case "http-starter":
				StarterComparison.main(options);
				break;
			case "report":
				Report.main(options);
				break;
			case "pictures":
				AlgorithmPictures.main(options);
				break;
			default:
				throw new IllegalArgumentException("Unknown command '" + args[0]
						+ "': memory, redis, redis-memory, redis-clients, redis-concurrency, redis-rate-and-concurrency, http, http-starter, report or pictures");
		}
		System.exit(0);
	}

}
