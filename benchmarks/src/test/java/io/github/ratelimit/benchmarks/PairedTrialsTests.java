package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rounds alternate the order of the sides, and each round yields one ratio.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class PairedTrialsTests {

	@Test
	void roundsAlternateTheOrderAndPairTheirOwnTrials() throws Exception {
		List<String> order = new ArrayList<>();
		double[] drift = { 1 };
		// About pairing, not load: no round counts as busy (rounds of microseconds make
		// the CPU other processes used, in ticks of 10 ms, jump between 0 and cores).
		MachineLoad neverBusy = new MachineLoad(ProcessHandle.current().pid(), Double.POSITIVE_INFINITY);
		PairedTrials pairs = PairedTrials.run(List.of("ours", "theirs"), 4, neverBusy, "decisions/s", (side) -> {
			order.add(side);
			// The machine slows down round after round; ours is always twice as
			// fast.
			drift[0] *= 0.9;
			return PairedTrials.Figures.throughput((side.equals("ours") ? 200 : 100) * drift[0]);
		});
		assertThat(order).containsExactly("ours", "theirs", "theirs", "ours", "ours", "theirs", "theirs", "ours");
		Map<String, String> impls = new LinkedHashMap<>();
		impls.put("ours", "ours");
		impls.put("theirs", "peer");
		List<Measurement> measurements = pairs.measurements("c", "v", impls);
		Measurement ratios = measurements.stream()
			.filter((m) -> m.metric().equals("pair-ratio"))
			.findFirst()
			.orElseThrow();
		assertThat(ratios.impl()).isEqualTo("peer");
		assertThat(ratios.samples()).isEqualTo(4);
		// Each pair's ratio is 2 give or take one step of drift, whichever side went
		// first.
		assertThat(ratios.min()).isBetween(1.8, 2.23);
		assertThat(ratios.max()).isBetween(1.8, 2.23);
		assertThat(measurements).anySatisfy((m) -> {
			assertThat(m.impl()).isEqualTo("machine");
			assertThat(m.metric()).isEqualTo("other-cpu");
		});
		assertThat(measurements).anySatisfy((m) -> {
			assertThat(m.impl()).isEqualTo("machine");
			assertThat(m.metric()).isEqualTo("cross-core");
			assertThat(m.samples()).isEqualTo(4);
			// Two threads handing a value over cannot do it in no time, nor take a
			// second per hand-off.
			assertThat(m.min()).isGreaterThan(0);
			assertThat(m.max()).isLessThan(1e9);
		});
	}

	@Test
	void busyRoundsAreLeftOutOfTheRatios() {
		// The second and fourth rounds ran beside another process's work.
		double[] ratios = PairedTrials.quietRatios(new double[] { 200, 90, 210, 60, 190 },
				new double[] { 100, 100, 100, 100, 100 }, new boolean[] { false, true, false, true, false });
		assertThat(ratios).containsExactly(2.0, 2.1, 1.9);
	}

	@Test
	void everyRoundCountsWhenAllWereBusy() {
		// The ratio is then invalid (Ratios), but still has a value to show.
		double[] ratios = PairedTrials.quietRatios(new double[] { 200, 90 }, new double[] { 100, 100 },
				new boolean[] { true, true });
		assertThat(ratios).containsExactly(2.0, 0.9);
	}

}
