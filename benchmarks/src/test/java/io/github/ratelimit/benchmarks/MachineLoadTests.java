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
	void roundIsBusyWhenOtherProcessesUsedMoreThanTheThreshold() {
		MachineLoad load = new MachineLoad(ProcessHandle.current().pid(), 0.2);
		assertThat(load.busy(0.21)).isTrue();
		assertThat(load.busy(0.2)).isFalse();
		assertThat(load.busy(0)).isFalse();
		// No /proc: nothing can be told, and nothing is left out.
		assertThat(load.busy(Double.NaN)).isFalse();
	}

	@Test
	void busyCoresOptionSetsTheThreshold() {
		assertThat(MachineLoad.busyCores(new Options(new String[] { "--busy-cores=0.5" }, 0))).isEqualTo(0.5);
		assertThat(MachineLoad.busyCores(new Options(new String[0], 0))).isEqualTo(Ratios.DEFAULT_BUSY_CORES);
	}

	@Test
	void ownProcessTreeIncludesThisJvm() {
		MachineLoad load = new MachineLoad(ProcessHandle.current().pid(), Ratios.DEFAULT_BUSY_CORES);
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
