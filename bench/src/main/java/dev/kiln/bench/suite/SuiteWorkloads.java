package dev.kiln.bench.suite;

import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads the suite's workload list: lines {@code op <TAB> compute description <TAB> config}, where
 * config is comma-separated integers; '#' starts a comment line, blank lines are skipped. The
 * default list is the copy of ../shared/workloads/ansor-ops.tsv shipped as a resource
 * ({@link #RESOURCE}); any bad line throws a {@link KilnException} naming the file and line.
 */
public final class SuiteWorkloads {
    private SuiteWorkloads() {}

    /** The shipped copy of ../shared/workloads/ansor-ops.tsv. */
    public static final String RESOURCE = "/dev/kiln/bench/suite/ansor-ops.tsv";

    /** The shipped list. */
    public static List<SuiteWorkload> builtIn() {
        try (InputStream in = SuiteWorkloads.class.getResourceAsStream(RESOURCE)) {
            if (in == null)
                throw new KilnException("the suite's workload list " + RESOURCE + " is not on the class path");
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "ansor-ops.tsv (built in)");
        } catch (IOException e) {
            throw new KilnException("cannot read " + RESOURCE + ": " + e.getMessage());
        }
    }

    /** The list in {@code file}. */
    public static List<SuiteWorkload> read(Path file) {
        try {
            return parse(Files.readString(file), file.toString());
        } catch (IOException e) {
            throw new KilnException("--workloads: cannot read " + file + ": " + e.getMessage());
        }
    }

    /** Parses the text of a list; {@code name} names it in messages. */
    public static List<SuiteWorkload> parse(String text, String name) {
        List<SuiteWorkload> out = new ArrayList<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.isBlank() || line.stripLeading().startsWith("#")) continue;
            String where = name + ":" + (i + 1);
            String[] f = line.split("\t");
            if (f.length != 3) {
                throw new KilnException(where + ": expected 3 tab-separated fields (op, compute, config), got "
                        + f.length + ": '" + line + "'");
            }
            String op = SuiteWorkload.canonicalOp(f[0], where);
            List<Long> params = new ArrayList<>();
            for (String p : f[2].split(",")) {
                try {
                    params.add(Long.parseLong(p.strip()));
                } catch (NumberFormatException e) {
                    throw new KilnException(where + ": config '" + f[2] + "' is not a list of integers ('" + p + "')");
                }
            }
            out.add(new SuiteWorkload(op, params, where));
        }
        if (out.isEmpty()) throw new KilnException(name + ": no workloads in the list");
        return out;
    }

    /**
     * The workloads whose operator is in {@code ops} (case-insensitive; empty: all), with batch
     * {@code batch}. Throws naming the operator when a name is unknown or matches nothing.
     */
    public static List<SuiteWorkload> select(List<SuiteWorkload> all, List<String> ops, long batch) {
        if (batch < 1) throw new KilnException("--batch must be at least 1, got " + batch);
        Set<String> want =
                ops.stream().map(o -> SuiteWorkload.canonicalOp(o, "--ops")).collect(Collectors.toSet());
        for (String o : want) {
            if (all.stream().noneMatch(w -> w.op().equals(o)))
                throw new KilnException("--ops: no workload of operator " + o + " in the list");
        }
        return all.stream()
                .filter(w -> want.isEmpty() || want.contains(w.op()))
                .map(w -> w.withBatch(batch))
                .toList();
    }
}
