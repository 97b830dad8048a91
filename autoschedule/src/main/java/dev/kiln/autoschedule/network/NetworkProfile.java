package dev.kiln.autoschedule.network;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Where a compiled network's time goes ({@link CompiledNetwork#profile}).
 *
 * @param seconds          median time of a plain run
 * @param kernelSeconds    median, over the instrumented runs, of the sum of the kernel calls' times
 * @param calls            each kernel call's median time, in execution order
 * @param p10Seconds       the 10th percentile of the plain runs' times (with p90: their spread)
 * @param p90Seconds       the 90th percentile of the plain runs' times
 */
public record NetworkProfile(
        double seconds, double kernelSeconds, List<Entry> calls, double p10Seconds, double p90Seconds) {
    public NetworkProfile {
        calls = List.copyOf(calls);
    }

    /**
     * One kernel call: the group it runs, its task, its median time, the task's operations and
     * whether they are floating-point (else integer ones, rated in GOP/s).
     */
    public record Entry(int group, String description, int task, double seconds, long flops, boolean floatArithmetic) {
        public Entry(int group, String description, int task, double seconds, long flops) {
            this(group, description, task, seconds, flops, true);
        }

        /** GFLOP/s, or GOP/s for an integer kernel. */
        public double gflops() {
            return flops / seconds / 1e9;
        }
    }

    /** The share of a plain run spent outside the kernels (binding, checks, the loop), at least 0. */
    public double overheadShare() {
        return Math.max(0, seconds - kernelSeconds) / seconds;
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

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
