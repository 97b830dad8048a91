package dev.kiln.bench.model;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.nn.Conv;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Softmax;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The workloads of the cost-model and search benchmarks, from ../shared/workloads/ansor-ops.tsv
 * (float32, NHWC, batch 1), named by a short spec: {@code gemm:N} (N x N x N, which is GMM
 * 1xNxNxN), {@code c2d:I} (the I-th C2D layer: 0 224x224x3 -> 64 7x7/2, 1 56x56x64 -> 64 1x1,
 * 2 14x14x256 -> 256 3x3, 3 7x7x512 -> 512 3x3), {@code dep:I} (the I-th depthwise layer; 0 is
 * 112x112x32 3x3) and {@code softmax:NxM}.
 */
public final class BenchWorkloads {
    private BenchWorkloads() {}

    /** A workload and its display name. */
    public record Workload(String spec, String name, ComputeDAG dag) {}

    private static final int[][] C2D = {{224, 3, 64, 7, 2, 3}, {56, 64, 64, 1, 1, 0}, {14, 256, 256, 3, 1, 1},
            {7, 512, 512, 3, 1, 1}};
    private static final int[][] DEP = {{112, 32, 3, 1, 1}, {112, 64, 3, 2, 1}, {14, 512, 3, 2, 1}, {7, 1024, 3, 1, 1}};

    /** The workload of a spec; throws with the accepted forms otherwise. */
    public static Workload of(String spec) {
        String[] p = spec.split(":");
        try {
            return switch (p[0]) {
                case "gemm" -> {
                    int n = Integer.parseInt(p[1]);
                    yield new Workload(spec, "GEMM " + n,
                            ComputeDAG.of(Linalg.matmul(Te.placeholder("A", FLOAT32, n, n), Te.placeholder("B", FLOAT32, n, n))));
                }
                case "c2d" -> {
                    int[] l = C2D[Integer.parseInt(p[1])];
                    Tensor data = Te.placeholder("data", FLOAT32, 1, l[0], l[0], l[1]);
                    Tensor weight = Te.placeholder("weight", FLOAT32, l[3], l[3], l[1], l[2]);
                    yield new Workload(spec, String.format("C2D %dx%dx%d->%d %dx%d", l[0], l[0], l[1], l[2], l[3], l[3]),
                            ComputeDAG.of(Conv.conv2dNhwc(data, weight, l[4], l[5])));
                }
                case "dep" -> {
                    int[] l = DEP[Integer.parseInt(p[1])];
                    Tensor data = Te.placeholder("data", FLOAT32, 1, l[0], l[0], l[1]);
                    Tensor weight = Te.placeholder("weight", FLOAT32, l[2], l[2], l[1], 1);
                    yield new Workload(spec, String.format("DEP %dx%dx%d %dx%d", l[0], l[0], l[1], l[2], l[2]),
                            ComputeDAG.of(Conv.depthwiseConv2dNhwc(data, weight, l[3], l[4])));
                }
                case "softmax" -> {
                    String[] nm = p[1].split("x");
                    yield new Workload(spec, "softmax " + p[1], ComputeDAG.of(Softmax.softmax(
                            Te.placeholder("A", FLOAT32, Long.parseLong(nm[0]), Long.parseLong(nm[1])), 1)));
                }
                default -> throw new IllegalArgumentException();
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("workload '" + spec
                    + "': expected gemm:N, c2d:0..3, dep:0..3 or softmax:NxM", e);
        }
    }

    /** Several specs, comma-separated. */
    public static List<Workload> list(String specs) {
        return java.util.Arrays.stream(specs.split(",")).map(String::trim).map(BenchWorkloads::of).toList();
    }
}
