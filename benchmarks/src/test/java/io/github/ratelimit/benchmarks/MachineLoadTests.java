package io.github.ratelimit.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Other processes' CPU is the machine's busy time less the benchmark's own.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class MachineLoadTests {

	@Test
	void otherCoresAreTheMachinesBusyTicksLessOursPerSecond() {
		MachineLoad.Snapshot start = new MachineLoad.Snapshot(0, 1000, 400, 1.0);
		// Two seconds later: the machine spent 300 ticks (3 CPU seconds), we spent 200.
		MachineLoad.Snapshot end = new MachineLoad.Snapshot(2_000_000_000L, 1300, 600, 1.5);
		assertThat(end.otherCoresSince(start)).isEqualTo(0.5);
	}

	@Test
	void unknownCountersMeasureNothing() {
		MachineLoad.Snapshot unknown = new MachineLoad.Snapshot(0, -1, -1, Double.NaN);
		assertThat(new MachineLoad.Snapshot(1_000_000_000L, 10, 5, 0).otherCoresSince(unknown)).isNaN();
	}

	@Test
	void ownProcessTreeIncludesThisJvm() {
		MachineLoad load = new MachineLoad(ProcessHandle.current().pid());
		MachineLoad.Snapshot start = load.now();
		if (start.machineTicks() < 0) {
			return;
		}
		long until = System.nanoTime() + 300_000_000L;
		long spin = 0;
		while (System.nanoTime() < until) {
			spin++;
		}
		MachineLoad.Snapshot end = load.now();
		assertThat(spin).isPositive();
		// This JVM's spinning counts as ours: our ticks grew by at least a part of it.
		assertThat(end.ownTicks() - start.ownTicks()).isPositive();
		assertThat(end.otherCoresSince(start)).isGreaterThanOrEqualTo(0);
	}

}
