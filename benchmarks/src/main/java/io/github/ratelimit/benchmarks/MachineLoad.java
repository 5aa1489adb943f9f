package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How busy the machine was apart from the benchmark: CPU time used by every process
 * outside the benchmark's own process tree, from {@code /proc/stat} (all CPU time the
 * machine spent, including time stolen by the hypervisor) minus {@code /proc/<pid>/stat}
 * of the benchmark's processes. Those are the process {@code --own-root} names
 * ({@code run.sh} passes its own pid: the benchmark JVMs, JMH's forks, redis-server and
 * the apps are its descendants) and everything below it, counting children that have
 * ended through their parent's {@code cutime}/{@code cstime}.
 * <p>
 * On a two-core machine shared with builds, a trial measured while another process used a
 * core says little: a round in which other processes used more than {@code --busy-cores}
 * is {@linkplain #busy(double) busy} and left out of its comparison's ratio
 * ({@link PairedTrials}), and {@link Report} marks a ratio invalid when at least half of
 * its rounds were busy.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class MachineLoad {

	private final long root;

	private final double busyCores;

	/**
	 * Watches the machine apart from the process tree under {@code root}.
	 * @param root the pid of the benchmark's root process
	 * @param busyCores other processes' CPU, in cores, above which a round is busy
	 */
	MachineLoad(long root, double busyCores) {
		this.root = root;
		this.busyCores = busyCores;
	}

	static MachineLoad of(Options options) {
		return new MachineLoad(Long.parseLong(options.value("own-root", Long.toString(ProcessHandle.current().pid()))),
				busyCores(options));
	}

	static double busyCores(Options options) {
		return Double.parseDouble(options.value("busy-cores", Double.toString(Ratios.DEFAULT_BUSY_CORES)));
	}

	/**
	 * Returns whether a round in which other processes used {@code otherCores} ran on a
	 * machine it did not have to itself. Unknown load ({@code NaN}, no {@code /proc}) is
	 * not busy: nothing can be told then.
	 * @param otherCores other processes' CPU during the round, in cores
	 * @return whether the round was busy
	 */
	boolean busy(double otherCores) {
		return otherCores > this.busyCores;
	}

	/**
	 * Reads the counters now.
	 * @return the counters, or a snapshot that measures nothing where {@code /proc} is
	 * missing
	 */
	Snapshot now() {
		try {
			return new Snapshot(System.nanoTime(), machineTicks(), ownTicks(), loadAverage());
		}
		catch (IOException | RuntimeException ex) {
			// Not Linux, or /proc changed under us: measure nothing rather than fail.
			return new Snapshot(System.nanoTime(), -1, -1, Double.NaN);
		}
	}

	/** Busy CPU ticks of the whole machine (everything but idle and I/O wait). */
	private static long machineTicks() throws IOException {
		String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
		long busy = 0;
		for (int i = 1; i < f.length; i++) {
			// cpu user nice system idle iowait irq softirq steal guest guest_nice; guest
			// time is already in user.
			if (i != 4 && i != 5 && i < 9) {
				busy += Long.parseLong(f[i]);
			}
		}
		return busy;
	}

	/** CPU ticks of the root and its descendants, alive or ended. */
	private long ownTicks() throws IOException {
		Map<Long, List<long[]>> children = new HashMap<>();
		Map<Long, Long> ticks = new HashMap<>();
		try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
			for (Path process : processes) {
				String stat;
				try {
					stat = Files.readString(process.resolve("stat"));
				}
				catch (IOException ex) {
					// Ended since the listing.
					continue;
				}
				// The name may hold spaces and parentheses: fields follow the last ')'.
				String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
				long pid = Long.parseLong(process.getFileName().toString());
				long ppid = Long.parseLong(f[1]);
				// utime, stime, cutime, cstime: fields 14-17 of proc(5), 11-14 here.
				long own = Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13])
						+ Long.parseLong(f[14]);
				ticks.put(pid, own);
				children.computeIfAbsent(ppid, (k) -> new ArrayList<>()).add(new long[] { pid });
			}
		}
		long sum = 0;
		List<Long> queue = new ArrayList<>(List.of(this.root));
		while (!queue.isEmpty()) {
			long pid = queue.remove(queue.size() - 1);
			sum += ticks.getOrDefault(pid, 0L);
			for (long[] child : children.getOrDefault(pid, List.of())) {
				queue.add(child[0]);
			}
		}
		return sum;
	}

	private static double loadAverage() throws IOException {
		return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
	}

	/**
	 * The counters at one moment.
	 *
	 * @param nanos {@link System#nanoTime()}
	 * @param machineTicks busy CPU ticks of the machine, {@code -1} if unknown
	 * @param ownTicks CPU ticks of the benchmark's processes, {@code -1} if unknown
	 * @param loadAverage the one-minute load average
	 */
	record Snapshot(long nanos, long machineTicks, long ownTicks, double loadAverage) {

		/**
		 * Returns how many cores other processes kept busy on average since
		 * {@code start}.
		 * @param start the earlier snapshot
		 * @return cores, {@code NaN} if unknown
		 */
		double otherCoresSince(Snapshot start) {
			if (this.machineTicks < 0 || start.machineTicks < 0) {
				return Double.NaN;
			}
			long other = (this.machineTicks - start.machineTicks) - (this.ownTicks - start.ownTicks);
			double seconds = (this.nanos - start.nanos) / 1e9;
			// USER_HZ is 100 on every Linux architecture Java runs on.
			return Math.max(0, other / 100.0 / seconds);
		}

	}

}
