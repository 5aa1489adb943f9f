package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The ratios of one run: per comparison variant, the median of the per-pair ratios ours /
 * theirs with their range, and the machine's load while it ran; per comparison, a
 * headline: the lowest of the variants its goal is about ({@link #HEADLINE_VARIANTS}; the
 * others are shown, not headlined).
 * <p>
 * A variant is <em>busy</em> when, in at least half of its pairs, processes outside the
 * benchmark used more than {@code busyCores} of CPU: its ratio, the median over the other
 * pairs ({@link PairedTrials} leaves busy ones out), then rests on too few of them. A
 * headline is invalid when any of its headlined variants is busy, since the lowest cannot
 * be told then.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Ratios {

	/** Other processes' CPU above which a pair counts as busy, by default. */
	static final double DEFAULT_BUSY_CORES = 0.2;

	/** Comparisons, in the order printed, with their goals. */
	static final Map<String, Double> GOALS = new LinkedHashMap<>();

	static {
		// Ours coalesces concurrent decisions on the hot key, so fewer calls than the
		// peer's.
		GOALS.put("redis-vs-lettuce-evalsha-c64", 1.2);
		GOALS.put("redis-vs-bucket4j-lettuce-batching-hot-c64", 1.0);
		GOALS.put("redis-vs-bucket4j-lettuce-hot", 3.0);
		GOALS.put("redis-vs-bucket4j-lettuce-100k", Double.NaN);
		GOALS.put("redis-flood-local-rejections", 10.0);
		// Acquire + release of one permit, 64 in flight, 1 and 100,000 keys.
		GOALS.put("redis-concurrency-vs-redisson-semaphore", 1.5);
		GOALS.put("memory-vs-bucket4j-local", 1.0);
		GOALS.put("memory-vs-resilience4j", 1.0);
		GOALS.put("http-overhead-memory", 0.95);
		GOALS.put("http-overhead-redis", Double.NaN);
		GOALS.put("http-vs-bucket4j-starter-hot", 5.0);
		GOALS.put("http-vs-bucket4j-starter-100k", 1.0);
	}

	/**
	 * The variants a comparison's goal is about, where not all: the in-memory goals are
	 * about one key (the 100,000-key variants show what a bounded, expiring map costs, a
	 * different question, with a spread of their own).
	 */
	static final Map<String, Predicate<String>> HEADLINE_VARIANTS = Map.of("memory-vs-bucket4j-local",
			(variant) -> variant.contains("-1key-"), "memory-vs-resilience4j", (variant) -> variant.contains("-1key-"));

	private Ratios() {
	}

	/**
	 * Ours against each peer for every throughput variant, plus a headline (the lowest of
	 * the variants its goal is about) per comparison, headline first.
	 * @param measurements the run's measurements
	 * @param busyCores other processes' CPU above which a pair counts as busy
	 * @return the ratios
	 */
	static List<Ratio> of(List<Measurement> measurements, double busyCores) {
		List<Ratio> ratios = new ArrayList<>();
		for (Map.Entry<String, Double> goal : GOALS.entrySet()) {
			String comparison = goal.getKey();
			List<Ratio> variants = new ArrayList<>();
			for (Measurement ours : measurements) {
				if (!ours.comparison().equals(comparison) || !ours.impl().equals("ours")
						|| !ours.metric().equals("throughput")) {
					continue;
				}
				if (comparison.startsWith("http-overhead") && ours.variant().equals("c1")) {
					// Throughput is compared under load; c1 is there for latency.
					continue;
				}
				boolean paired = measurements.stream()
					.anyMatch((m) -> m.comparison().equals(comparison) && m.variant().equals(ours.variant())
							&& m.metric().equals("pair-ratio"));
				for (Measurement theirs : measurements) {
					if (theirs.comparison().equals(comparison) && theirs.variant().equals(ours.variant())
							&& !theirs.impl().equals("ours") && theirs.metric().equals("throughput")) {
						Optional<Measurement> pairs = find(measurements, comparison, ours.variant(), theirs.impl(),
								"pair-ratio");
						if (paired && pairs.isEmpty()) {
							// A side measured for another purpose (a latency baseline).
							continue;
						}
						Measurement load = find(measurements, comparison, ours.variant(), "machine", "other-cpu")
							.orElse(null);
						Measurement crossCore = find(measurements, comparison, ours.variant(), "machine", "cross-core")
							.orElse(null);
						variants.add(new Ratio(comparison, ours.variant(), theirs.impl(), ours, theirs,
								pairs.orElse(null), load, crossCore, goal.getValue(),
								load != null && load.median() > busyCores, false));
					}
				}
			}
			Ratio lowest = null;
			boolean busy = false;
			Predicate<String> headlined = HEADLINE_VARIANTS.getOrDefault(comparison, (variant) -> true);
			for (Ratio ratio : variants) {
				if (!headlined.test(ratio.variant)) {
					continue;
				}
				busy |= ratio.busy;
				if (lowest == null || ratio.value() < lowest.value()) {
					lowest = ratio;
				}
			}
			if (lowest != null) {
				ratios.add(new Ratio(comparison, lowest.variant, lowest.peer, lowest.ours, lowest.theirs, lowest.pairs,
						lowest.load, lowest.crossCore, lowest.goal, busy, true));
			}
			ratios.addAll(variants);
		}
		return ratios;
	}

	static Optional<Measurement> find(List<Measurement> measurements, String comparison, String variant, String impl,
			String metric) {
		return measurements.stream()
			.filter((m) -> m.comparison().equals(comparison) && m.variant().equals(variant) && m.impl().equals(impl)
					&& m.metric().equals(metric))
			.findFirst();
	}

	/**
	 * Ours against one peer in one variant.
	 *
	 * @param comparison the comparison
	 * @param variant the variant
	 * @param peer the peer's impl name
	 * @param ours our throughput
	 * @param theirs the peer's throughput
	 * @param pairs the per-pair ratios, if the trials were paired
	 * @param load other processes' CPU per pair, in cores, if measured
	 * @param crossCore a cache line's round trip between two cores per pair, in
	 * nanoseconds, if measured
	 * @param goal the comparison's goal, {@code NaN} if none
	 * @param busy whether the machine was busy (for a headline: during any variant)
	 * @param headline whether this is the comparison's headline
	 */
	record Ratio(String comparison, String variant, String peer, Measurement ours, Measurement theirs,
			@Nullable Measurement pairs, @Nullable Measurement load, @Nullable Measurement crossCore, double goal,
			boolean busy, boolean headline) {

		/**
		 * Returns the median of the per-pair ratios, or the ratio of the medians for
		 * trials that were not paired.
		 * @return ours / theirs
		 */
		double value() {
			return (this.pairs != null) ? this.pairs.median() : this.ours.median() / this.theirs.median();
		}

		/**
		 * Returns the range of the per-pair ratios, e.g. {@code 0.91–1.04 (7 pairs)}, or
		 * {@code 0.91–1.04 (7 of 11 pairs)} when busy rounds were left out.
		 * @return the range, or {@code "unpaired"}
		 */
		String range() {
			if (this.pairs == null) {
				return "unpaired";
			}
			return String.format(Locale.ROOT, "%.2f–%.2f (%d%s pairs)", this.pairs.min(), this.pairs.max(),
					this.pairs.samples(), ofRounds());
		}

		/**
		 * Returns {@code " of <rounds>"} when busy rounds were left out of the pairs,
		 * else an empty string.
		 * @return the suffix to the number of pairs
		 */
		String ofRounds() {
			return (this.pairs != null && this.load != null && this.load.samples() > this.pairs.samples())
					? " of " + this.load.samples() : "";
		}

		/**
		 * Returns other processes' CPU, median and largest over the pairs, e.g.
		 * {@code 0.03 (max 0.41) cores}.
		 * @return the load, or {@code "not measured"}
		 */
		String loadText() {
			return (this.load != null)
					? String.format(Locale.ROOT, "%.2f (max %.2f) cores", this.load.median(), this.load.max())
					: "not measured";
		}

		boolean met() {
			return !this.busy && !Double.isNaN(this.goal) && value() >= this.goal;
		}

	}

}
