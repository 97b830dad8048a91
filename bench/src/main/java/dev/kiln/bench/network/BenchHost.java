package dev.kiln.bench.network;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The host the benchmarks run on, as they describe it: its load average, printed before and after each timing (numbers
 * taken while other processes run are not comparable), and whether its CPU has AVX-512 (which decides the
 * {@code OPENBLAS_CORETYPE} a benchmark's children get). Read from {@code /proc}; a host without it answers "unknown".
 */
public final class BenchHost {
    private BenchHost() {}

    /** The 1-, 5- and 15-minute load averages, "a/b/c"; "?" where /proc/loadavg is missing. */
    public static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + "/" + f[1] + "/" + f[2];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /** Whether /proc/cpuinfo lists {@code avx512f}; false where it cannot be read. */
    public static boolean cpuHasAvx512() {
        try {
            return Files.readString(Path.of("/proc/cpuinfo")).contains(" avx512f");
        } catch (IOException e) {
            return false;
        }
    }
}
