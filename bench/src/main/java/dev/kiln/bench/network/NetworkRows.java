package dev.kiln.bench.network;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rows of the network benchmark ({@link NetworkBench}): one tab-separated line per network, thread count and
 * implementation ({@link #HEADER}), as the child JVMs write them; the table printed from them and the TSV file.
 */
final class NetworkRows {
    private NetworkRows() {}

    static final String HEADER = "network\tthreads\timpl\tmedian_ms\tmin_ms\tp10_ms\tp90_ms\truns"
            + "\tmax_abs_err\tcheck\tload_before\tload_after\tnotes";

    /** One row: the timing of {@code impl} on network {@code net} at {@code t} threads, its check and a note. */
    static String row(String net, int t, String impl, Timing tm, String err, String check, String note) {
        return String.join(
                "\t",
                net,
                String.valueOf(t),
                impl,
                String.format(Locale.ROOT, "%.3f", tm.medianMs()),
                String.format(Locale.ROOT, "%.3f", tm.minMs()),
                String.format(Locale.ROOT, "%.3f", tm.p10Ms()),
                String.format(Locale.ROOT, "%.3f", tm.p90Ms()),
                String.valueOf(tm.runs()),
                err,
                check,
                tm.loadBefore(),
                tm.loadAfter(),
                note.replace('\t', ' ').replace('\n', ' '));
    }

    /** The row of an implementation whose child JVM exited with {@code rc} before writing it. */
    static String crashed(String net, int t, String impl, int rc) {
        return String.join(
                "\t",
                net,
                String.valueOf(t),
                impl,
                "-",
                "-",
                "-",
                "-",
                "0",
                "-",
                "CRASHED",
                BenchHost.loadAverage(),
                BenchHost.loadAverage(),
                "the child JVM exited with " + rc + " (see its output and hs_err_pid*.log); rows measured before "
                        + "the crash were kept");
    }

    /** Whether a row's check failed. */
    static boolean anyMismatch(List<String> rows) {
        return rows.stream().anyMatch(r -> r.split("\t")[9].equals("MISMATCH"));
    }

    /** Writes the header and the rows to a new {@code network-<date-time>.tsv} in {@code dir}; returns its path. */
    static Path write(Path dir, List<String> rows) throws IOException {
        Path tsv = dir.resolve(
                "network-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".tsv");
        List<String> out = new ArrayList<>();
        out.add(HEADER);
        out.addAll(rows);
        Files.write(tsv, out);
        return tsv;
    }

    /** Prints the rows as a table, then each distinct note under it. */
    static void print(List<String> rows) {
        System.out.printf(
                Locale.ROOT,
                "%n%-15s %3s %-32s %10s %10s %19s %5s %11s %-8s %-15s %-15s%n",
                "network",
                "thr",
                "impl",
                "median ms",
                "min ms",
                "p10-p90 ms",
                "runs",
                "max |err|",
                "check",
                "load before",
                "load after");
        for (String r : rows) {
            String[] f = r.split("\t", -1);
            System.out.printf(
                    Locale.ROOT,
                    "%-15s %3s %-32s %10s %10s %19s %5s %11s %-8s %-15s %-15s%n",
                    f[0],
                    f[1],
                    f[2],
                    f[3],
                    f[4],
                    f[5] + "-" + f[6],
                    f[7],
                    f[8],
                    f[9],
                    f[10],
                    f[11]);
        }
        rows.stream()
                .map(r -> r.split("\t", -1))
                .filter(f -> !f[12].isBlank())
                .map(f -> f[0] + " " + f[1] + "t " + f[2] + ": " + f[12])
                .distinct()
                .forEach(System.out::println);
    }
}
