package dev.kiln.bench.onnx;

import dev.kiln.bench.network.Timing;
import java.util.List;
import java.util.Locale;

/**
 * The table {@code ./kiln onnx} prints at the end of a child: one row per implementation at the child's thread count
 * (ONNX Runtime, the reference, then Kiln), its format and its header.
 */
final class OnnxRows {
    private OnnxRows() {}

    /**
     * One implementation's row: thread count, name, median and minimum in ms, runs, max |error| against ONNX Runtime,
     * the check, the load average before and after, then the note on a line of its own.
     */
    static String row(int t, String impl, Timing tm, String err, String check, String note) {
        return String.format(
                Locale.ROOT,
                "%-3d %-24s %10.3f %10.3f %5d %11s %-9s %-15s %-15s%n    %s",
                t,
                impl,
                tm.medianMs(),
                tm.minMs(),
                tm.runs(),
                err,
                check,
                tm.loadBefore(),
                tm.loadAfter(),
                note);
    }

    /** Prints the header, then the rows. */
    static void print(List<String> rows) {
        System.out.printf(
                Locale.ROOT,
                "%n%-3s %-24s %10s %10s %5s %11s %-9s %-15s %-15s%n",
                "thr",
                "impl",
                "median ms",
                "min ms",
                "runs",
                "max |err|",
                "check",
                "load before",
                "load after");
        rows.forEach(r -> System.out.println(r));
    }
}
