package dev.kiln.bench.suite;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One result of the suite: an implementation of one workload on one thread count. Times are per
 * call in ms (NaN where nothing ran); {@code relToBest} is the best median of the workload and
 * thread count over this one's (1 = the fastest, as the paper's figure normalises);
 * {@code tuneSeconds}, {@code trials}, {@code secondsPerTrial} and {@code outsideMeasure} (the
 * share of tuning wall time spent outside measurement) are Kiln's, NaN/0 for the baselines.
 */
public record SuiteRow(
        String op,
        String config,
        int threads,
        String impl,
        Status status,
        String kernel,
        double minMs,
        double medianMs,
        double p90Ms,
        long calls,
        double gflops,
        double maxAbsErr,
        double relToBest,
        double tuneSeconds,
        int trials,
        double secondsPerTrial,
        double outsideMeasure,
        String loadBefore,
        String loadAfter,
        String notes) {

    /**
     * What happened: measured and checked, wrong output, the implementation lacks the operator, it failed, its process
     * died.
     */
    public enum Status {
        OK,
        MISMATCH,
        UNSUPPORTED,
        ERROR,
        CRASHED
    }

    public static final String HEADER = String.join(
            "\t",
            "op",
            "config",
            "threads",
            "impl",
            "status",
            "kernel",
            "min_ms",
            "median_ms",
            "p90_ms",
            "calls",
            "gflops",
            "max_abs_err",
            "rel_to_best",
            "tune_s",
            "trials",
            "s_per_trial",
            "outside_measure",
            "load_before",
            "load_after",
            "notes");

    private static final int FIELDS = HEADER.split("\t").length;

    public SuiteRow {
        kernel = clean(kernel);
        notes = clean(notes);
    }

    /** A row for an implementation that did not run (unsupported, failed, crashed), saying why in the notes. */
    public static SuiteRow notRun(SuiteWorkload w, int threads, String impl, Status status, String why) {
        return new SuiteRow(
                w.op(),
                w.config(),
                threads,
                impl,
                status,
                "-",
                Double.NaN,
                Double.NaN,
                Double.NaN,
                0,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                0,
                Double.NaN,
                Double.NaN,
                "-",
                "-",
                why);
    }

    /** This row with its ratio to the best. */
    public SuiteRow withRelToBest(double r) {
        return new SuiteRow(
                op,
                config,
                threads,
                impl,
                status,
                kernel,
                minMs,
                medianMs,
                p90Ms,
                calls,
                gflops,
                maxAbsErr,
                r,
                tuneSeconds,
                trials,
                secondsPerTrial,
                outsideMeasure,
                loadBefore,
                loadAfter,
                notes);
    }

    /** "C2D 1,56,56,64,64,1,1,0". */
    public String workload() {
        return op + " " + config;
    }

    /** One TSV line (no tabs or newlines inside fields; NaN as "-"). */
    public String toTsv() {
        return String.join(
                "\t",
                op,
                config,
                String.valueOf(threads),
                impl,
                status.name(),
                kernel,
                num(minMs, "%.4f"),
                num(medianMs, "%.4f"),
                num(p90Ms, "%.4f"),
                String.valueOf(calls),
                num(gflops, "%.2f"),
                num(maxAbsErr, "%.2e"),
                num(relToBest, "%.3f"),
                num(tuneSeconds, "%.1f"),
                String.valueOf(trials),
                num(secondsPerTrial, "%.3f"),
                num(outsideMeasure, "%.3f"),
                loadBefore,
                loadAfter,
                notes.isEmpty() ? "-" : notes);
    }

    /** Reads a line written by {@link #toTsv}; {@code where} (file and line) is named when it is not one. */
    public static SuiteRow parse(String line, String where) {
        String[] f = line.split("\t", -1);
        if (f.length != FIELDS) {
            throw new KilnException(where + ": a suite row has " + FIELDS + " tab-separated fields, this one "
                    + f.length + ": '" + line + "'");
        }
        try {
            return new SuiteRow(
                    f[0],
                    f[1],
                    Integer.parseInt(f[2]),
                    f[3],
                    Status.valueOf(f[4]),
                    f[5],
                    dbl(f[6]),
                    dbl(f[7]),
                    dbl(f[8]),
                    Long.parseLong(f[9]),
                    dbl(f[10]),
                    dbl(f[11]),
                    dbl(f[12]),
                    dbl(f[13]),
                    Integer.parseInt(f[14]),
                    dbl(f[15]),
                    dbl(f[16]),
                    f[17],
                    f[18],
                    f[19].equals("-") ? "" : f[19]);
        } catch (IllegalArgumentException e) {
            throw new KilnException(where + ": not a suite row (" + e.getMessage() + "): '" + line + "'");
        }
    }

    /** Reads rows, one a line, naming {@code name} and the line number of a bad one. */
    public static List<SuiteRow> parseAll(List<String> lines, String name) {
        List<SuiteRow> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.isBlank() || l.equals(HEADER)) continue;
            out.add(parse(l, name + ":" + (i + 1)));
        }
        return out;
    }

    private static String num(double v, String fmt) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, fmt, v);
    }

    private static double dbl(String s) {
        return s.equals("-") ? Double.NaN : Double.parseDouble(s);
    }

    private static String clean(String s) {
        return s == null
                ? ""
                : s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ').strip();
    }
}
