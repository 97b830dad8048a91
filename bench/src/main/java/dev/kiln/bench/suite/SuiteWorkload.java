package dev.kiln.bench.suite;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * One row of the operator suite (../shared/workloads/ansor-ops.tsv): the operator's short name
 * (C1D, C2D, C3D, GMM, GRP, DIL, DEP, T2D, CAP, NRM, SFM, ConvLayer, TBS), its parameters in the
 * order the file's compute column names them, and where it came from ("file:line").
 *
 * @param op     the operator, as written in the file's first column
 * @param params the configuration, batch first (except SFM, which has none)
 * @param source the file and line it was read from, for messages
 */
public record SuiteWorkload(String op, List<Long> params, String source) {

    /** The operators the suite knows, with the number of parameters each takes. */
    static final List<String> OPS =
            List.of("C1D", "C2D", "C3D", "GMM", "GRP", "DIL", "DEP", "T2D", "CAP", "NRM", "SFM", "ConvLayer", "TBS");

    public SuiteWorkload {
        params = List.copyOf(params);
        int want = arity(op, source);
        if (params.size() != want) {
            throw new KilnException(
                    source + ": " + op + " takes " + want + " parameters, got " + params.size() + " " + params);
        }
        for (int i = 0; i < params.size(); i++) {
            long p = params.get(i);
            if (p < 0 || p == 0 && !isPadding(op, i)) {
                throw new KilnException(
                        source + ": " + op + " parameters must be positive (padding may be 0), got " + params);
            }
        }
    }

    /**
     * The canonical spelling of an operator name (case-insensitive), or a {@link KilnException} naming where it came
     * from.
     */
    static String canonicalOp(String name, String where) {
        return OPS.stream()
                .filter(o -> o.equalsIgnoreCase(name.strip()))
                .findFirst()
                .orElseThrow(() -> new KilnException(
                        where + ": unknown operator '" + name + "' (known: " + String.join(", ", OPS) + ")"));
    }

    private static int arity(String op, String source) {
        return switch (canonicalOp(op, source)) {
            case "C1D" -> 7;
            case "C2D", "GRP", "DIL", "T2D", "CAP", "ConvLayer" -> 8;
            case "C3D" -> 9;
            case "GMM", "TBS" -> 4;
            case "DEP" -> 7;
            case "NRM" -> 3;
            case "SFM" -> 2;
            default -> throw new IllegalStateException(op);
        };
    }

    private static boolean isPadding(String op, int index) {
        return switch (op) {
            case "C1D", "DEP" -> index == 6;
            case "C2D", "GRP", "DIL", "T2D", "CAP", "ConvLayer" -> index == 7;
            case "C3D" -> index == 8;
            default -> false;
        };
    }

    /** Parameter {@code i}. */
    long p(int i) {
        return params.get(i);
    }

    /** Whether the first parameter is the batch (every operator but SFM). */
    boolean hasBatch() {
        return !op.equals("SFM");
    }

    /** The batch, 1 where the workload has none. */
    long batch() {
        return hasBatch() ? params.getFirst() : 1;
    }

    /** This workload with batch {@code b} (SFM, which has no batch, is returned unchanged). */
    SuiteWorkload withBatch(long b) {
        if (!hasBatch()) return this;
        Long[] p = params.toArray(Long[]::new);
        p[0] = b;
        return new SuiteWorkload(op, Arrays.asList(p), source);
    }

    /** The configuration as in the file: "1,56,56,64,64,1,1,0". */
    public String config() {
        return params.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /** "C2D 1,56,56,64,64,1,1,0". */
    public String label() {
        return op + " " + config();
    }

    /** A file-name-safe key: "c2d-1-56-56-64-64-1-1-0". */
    public String key() {
        return (op + "-" + config().replace(',', '-')).toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return label() + " (" + source + ")";
    }
}
