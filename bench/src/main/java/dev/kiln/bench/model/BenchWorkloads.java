package dev.kiln.bench.model;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.bench.suite.SuiteWorkloads;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Softmax;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.util.List;

/**
 * The workloads of the cost-model and search benchmarks, from ../shared/workloads/ansor-ops.tsv
 * (float32, NHWC, batch 1; the C2D and DEP rows are read from the operator suite's copy of it,
 * {@link SuiteWorkloads}, and built by {@link SuiteDags}), named by a short spec: {@code gemm:N} (N x N x N, which is
 * GMM 1xNxNxN), {@code c2d:I} (the I-th C2D layer: 0 224x224x3 -> 64 7x7/2, 1 56x56x64 -> 64 1x1,
 * 2 14x14x256 -> 256 3x3, 3 7x7x512 -> 512 3x3), {@code dep:I} (the I-th depthwise layer; 0 is
 * 112x112x32 3x3) and {@code softmax:NxM}.
 */
public final class BenchWorkloads {
    private BenchWorkloads() {}

    /** A workload and its display name. */
    public record Workload(String spec, String name, ComputeDAG dag) {}

    /**
     * The {@code index}-th workload of operator {@code op} in the suite's list, built by {@link SuiteDags}; named by
     * {@code format} over the given parameters.
     */
    private static Workload suite(String op, int index, String spec, String format, int... nameParams) {
        SuiteWorkload w = SuiteWorkloads.builtIn().stream()
                .filter(x -> x.op().equals(op))
                .toList()
                .get(index);
        Object[] args = java.util.Arrays.stream(nameParams)
                .mapToObj(i -> w.params().get(i))
                .toArray();
        return new Workload(spec, String.format(format, args), SuiteDags.of(w));
    }

    /** The workload of a spec; throws with the accepted forms otherwise. */
    public static Workload of(String spec) {
        String[] p = spec.split(":");
        try {
            return switch (p[0]) {
                case "gemm" -> {
                    int n = Integer.parseInt(p[1]);
                    yield new Workload(
                            spec,
                            "GEMM " + n,
                            ComputeDAG.of(Linalg.matmul(
                                    Te.placeholder("A", FLOAT32, n, n), Te.placeholder("B", FLOAT32, n, n))));
                }
                case "c2d" -> suite("C2D", Integer.parseInt(p[1]), spec, "C2D %dx%dx%d->%d %dx%d", 1, 2, 3, 4, 5, 5);
                case "dep" -> suite("DEP", Integer.parseInt(p[1]), spec, "DEP %dx%dx%d %dx%d", 1, 2, 3, 4, 4);
                case "softmax" -> {
                    String[] nm = p[1].split("x");
                    yield new Workload(
                            spec,
                            "softmax " + p[1],
                            ComputeDAG.of(Softmax.softmax(
                                    Te.placeholder("A", FLOAT32, Long.parseLong(nm[0]), Long.parseLong(nm[1])), 1)));
                }
                default -> throw new IllegalArgumentException();
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "workload '" + spec + "': expected gemm:N, c2d:0..3, dep:0..3 or softmax:NxM", e);
        }
    }

    /** Several specs, comma-separated. */
    public static List<Workload> list(String specs) {
        return java.util.Arrays.stream(specs.split(","))
                .map(String::trim)
                .map(BenchWorkloads::of)
                .toList();
    }
}
