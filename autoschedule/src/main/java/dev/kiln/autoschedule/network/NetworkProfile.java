package dev.kiln.autoschedule.network;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Where a compiled network's time goes ({@link CompiledNetwork#profile}), and how far each kernel
 * falls behind the time it had when it was tuned ({@link #degradation}).
 *
 * @param seconds          median time of a plain run
 * @param kernelSeconds    median, over the instrumented runs, of the sum of the kernel calls' times
 * @param calls            each kernel call's times, in execution order
 * @param p10Seconds       the 10th percentile of the plain runs' times (with p90: their spread)
 * @param p90Seconds       the 90th percentile of the plain runs' times
 * @param sleepsPerRun     how often per plain run the parallel runtime's threads went to sleep (each
 *                         sleep costs a wake-up later); NaN when the runtime does not count them
 * @param workersHeld      whether the runs held the runtime's threads awake ({@link CompiledNetwork#holdWorkers})
 */
public record NetworkProfile(
        double seconds,
        double kernelSeconds,
        List<Entry> calls,
        double p10Seconds,
        double p90Seconds,
        double sleepsPerRun,
        boolean workersHeld) {
    public NetworkProfile {
        calls = List.copyOf(calls);
    }

    public NetworkProfile(
            double seconds, double kernelSeconds, List<Entry> calls, double p10Seconds, double p90Seconds) {
        this(seconds, kernelSeconds, calls, p10Seconds, p90Seconds, Double.NaN, false);
    }

    /**
     * One kernel call: the group it runs, its task, its median time in the network's runs, the
     * task's operations and whether they are floating-point (else integer ones, rated in GOP/s);
     * its fastest time in the network, the median time of the same call made again at once after
     * itself (its data and code then warm, the threads awake), and the task's time when it was tuned
     * (the best program's cost in the tuning log: timed alone, back to back; NaN when unknown).
     */
    public record Entry(
            int group,
            String description,
            int task,
            double seconds,
            long flops,
            boolean floatArithmetic,
            double minSeconds,
            double againSeconds,
            double tunedSeconds) {
        public Entry(int group, String description, int task, double seconds, long flops) {
            this(group, description, task, seconds, flops, true);
        }

        public Entry(int group, String description, int task, double seconds, long flops, boolean floatArithmetic) {
            this(group, description, task, seconds, flops, floatArithmetic, seconds, Double.NaN, Double.NaN);
        }

        /** GFLOP/s, or GOP/s for an integer kernel. */
        public double gflops() {
            return flops / seconds / 1e9;
        }

        /** Its time in the network over its tuned time (NaN when the tuned time is unknown). */
        public double ratio() {
            return seconds / tunedSeconds;
        }

        /** What it loses in the network against its tuned time, in seconds (NaN when unknown). */
        public double lostSeconds() {
            return seconds - tunedSeconds;
        }
    }

    /** The share of a plain run spent outside the kernels (binding, checks, the loop), at least 0. */
    public double overheadShare() {
        return Math.max(0, seconds - kernelSeconds) / seconds;
    }

    /** The sum over the calls of their tuned times: the tuner's estimate of the network (NaN if one is unknown). */
    public double tunedSeconds() {
        return calls.stream().mapToDouble(Entry::tunedSeconds).sum();
    }

    /** The calls sorted by {@link Entry#lostSeconds}, most first; calls without a tuned time last. */
    public List<Entry> byLostTime() {
        Comparator<Entry> byLost = Comparator.comparingDouble(
                e -> Double.isNaN(e.lostSeconds()) ? Double.NEGATIVE_INFINITY : e.lostSeconds());
        return calls.stream().sorted(byLost.reversed()).toList();
    }

    /** A table: the {@code top} slowest calls, then the totals. */
    public String table(int top) {
        StringBuilder sb = new StringBuilder(
                String.format(Locale.ROOT, "%-6s %-36s %-5s %10s %9s%n", "group", "kernel", "task", "ms", "rate"));
        calls.stream()
                .sorted(Comparator.comparingDouble(Entry::seconds).reversed())
                .limit(top)
                .forEach(e -> sb.append(String.format(
                        Locale.ROOT,
                        "%-6d %-36s %-5d %10.4f %9.1f %s%n",
                        e.group(),
                        e.description(),
                        e.task(),
                        e.seconds() * 1e3,
                        e.gflops(),
                        dev.kiln.te.ComputeDAG.rateUnit(e.floatArithmetic()))));
        sb.append(String.format(
                Locale.ROOT,
                "run %.4f ms (p10-p90 %.4f-%.4f), in kernels %.4f ms, outside %.2f%%%n",
                seconds * 1e3,
                p10Seconds * 1e3,
                p90Seconds * 1e3,
                kernelSeconds * 1e3,
                100 * overheadShare()));
        return sb.toString();
    }

    /**
     * Which kernels run slower in the network than when they were tuned, and why: for the {@code top}
     * calls that lose the most time, the median in the network, the fastest in the network, the same
     * call made again at once (warm data and code, threads awake), the tuned time and the ratios,
     * sorted by time lost; then the sums, split into what a call made again at once saves (the
     * state the kernels before it left: cold caches, first touch) and how warm calls compare with the tuned
     * times (above them: thread hand-off; below them: the tuner timed cold runs, as networks tune),
     * and the threads' sleeps per run. Calls without a tuned time (an untuned network) sort last.
     */
    public String degradation(int top) {
        StringBuilder sb = new StringBuilder(String.format(
                Locale.ROOT,
                "%-6s %-36s %-5s %9s %9s %9s %9s %7s %7s %8s%n",
                "group",
                "kernel",
                "task",
                "net ms",
                "min ms",
                "again ms",
                "tuned ms",
                "net/tun",
                "agn/tun",
                "lost ms"));
        byLostTime().stream()
                .limit(top)
                .forEach(e -> sb.append(String.format(
                        Locale.ROOT,
                        "%-6d %-36s %-5d %9.4f %9.4f %9.4f %9.4f %7.2f %7.2f %8.4f%n",
                        e.group(),
                        e.description(),
                        e.task(),
                        e.seconds() * 1e3,
                        e.minSeconds() * 1e3,
                        e.againSeconds() * 1e3,
                        e.tunedSeconds() * 1e3,
                        e.ratio(),
                        e.againSeconds() / e.tunedSeconds(),
                        e.lostSeconds() * 1e3)));
        double net = calls.stream().mapToDouble(Entry::seconds).sum();
        double again = calls.stream().mapToDouble(Entry::againSeconds).sum();
        double min = calls.stream().mapToDouble(Entry::minSeconds).sum();
        double tuned = tunedSeconds();
        sb.append(String.format(
                Locale.ROOT,
                "%d calls: network %.4f ms (sum of the fastest %.4f), again at once %.4f, tuned %.4f ms"
                        + " (net/tuned %.2fx; statistics: net and again are medians of single calls, tuned the"
                        + " minimum of the tuner's repeats, like the sum of the fastest)%n",
                calls.size(),
                net * 1e3,
                min * 1e3,
                again * 1e3,
                tuned * 1e3,
                net / tuned));
        if (!Double.isNaN(tuned)) {
            double lost = net - tuned, cold = net - again;
            sb.append(String.format(
                    Locale.ROOT,
                    "lost %.4f ms against the tuned times; calling each kernel again at once (warm data) saves %.4f"
                            + " ms of the network's time (what the kernels before it left in cache), and warm calls"
                            + " run %+.4f ms against the tuned times (above 0: the thread hand-off and what else the"
                            + " tuner's timing lacks; below 0: the tuner timed colder runs, the cache flush networks"
                            + " tune with)%n",
                    lost * 1e3,
                    cold * 1e3,
                    (again - tuned) * 1e3));
        }
        sb.append(
                Double.isNaN(sleepsPerRun)
                        ? "thread sleeps per run: not counted by this backend\n"
                        : String.format(
                                Locale.ROOT,
                                "thread sleeps per run: %.1f (workers %s)%n",
                                sleepsPerRun,
                                workersHeld ? "held awake during the run" : "not held"));
        return sb.toString();
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static double min(double[] xs) {
        return Arrays.stream(xs).min().orElse(Double.NaN);
    }
}
