package dev.kiln.bench.lowp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One row of {@code kiln bench lowp}'s table. {@code rate} is G operations per second (a
 * multiply-add is 2); {@code ofPeak} the fraction of the measured peak of the instruction set the
 * precision uses (VNNI for int8, BF16 for bf16, FMA for f32) at the same thread count;
 * {@code vsOnednn} oneDNN's time over this one (above 1: faster than oneDNN); {@code vsKilnF32}
 * Kiln's float32 time over this one. Unknown numbers are NaN and print as "-".
 */
record LowpRow(
        String workload,
        String dtype,
        int threads,
        String impl,
        String status,
        String kernel,
        double medianMs,
        double rate,
        double ofPeak,
        double vsOnednn,
        double vsKilnF32,
        String check,
        String notes) {

    static final List<String> HEADER = List.of(
            "workload",
            "dtype",
            "threads",
            "impl",
            "status",
            "median_ms",
            "gop_s",
            "of_peak",
            "vs_onednn",
            "vs_kiln_f32",
            "check",
            "kernel",
            "notes");

    static LowpRow skipped(String workload, String dtype, int threads, String impl, String why) {
        double n = Double.NaN;
        return new LowpRow(workload, dtype, threads, impl, why, "", n, n, n, n, n, "", "");
    }

    boolean ok() {
        return status.equals("ok");
    }

    LowpRow withRatios(double onednnMs, double kilnF32Ms) {
        return new LowpRow(
                workload,
                dtype,
                threads,
                impl,
                status,
                kernel,
                medianMs,
                rate,
                ofPeak,
                onednnMs / medianMs,
                kilnF32Ms / medianMs,
                check,
                notes);
    }

    List<String> cells() {
        return List.of(
                workload,
                dtype,
                Integer.toString(threads),
                impl,
                status,
                num(medianMs, "%.4f"),
                num(rate, "%.1f"),
                num(ofPeak, "%.3f"),
                num(vsOnednn, "%.2f"),
                num(vsKilnF32, "%.2f"),
                check,
                kernel,
                notes);
    }

    private static String num(double v, String fmt) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, fmt, v) : "-";
    }

    /** The table with aligned columns (kernel and notes last, unpadded). */
    static String table(List<LowpRow> rows) {
        List<List<String>> all = new ArrayList<>();
        all.add(HEADER);
        for (LowpRow r : rows) all.add(r.cells());
        int cols = HEADER.size();
        int[] w = new int[cols];
        for (List<String> r : all)
            for (int i = 0; i < cols - 2; i++) w[i] = Math.max(w[i], r.get(i).length());
        StringBuilder b = new StringBuilder();
        for (List<String> r : all) {
            for (int i = 0; i < cols; i++) {
                String cell = r.get(i).replace('\t', ' ');
                b.append(i < cols - 2 ? String.format("%-" + w[i] + "s", cell) : cell)
                        .append(i < cols - 1 ? "  " : "");
            }
            b.append('\n');
        }
        return b.toString();
    }

    static void writeTsv(Path file, List<LowpRow> rows) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(String.join("\t", HEADER));
        for (LowpRow r : rows) {
            lines.add(String.join(
                    "\t",
                    r.cells().stream()
                            .map(s -> s.replace('\t', ' ').replace('\n', ' '))
                            .toList()));
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.write(file, lines);
    }
}
