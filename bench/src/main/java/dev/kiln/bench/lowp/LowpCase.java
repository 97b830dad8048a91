package dev.kiln.bench.lowp;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.SplittableRandom;

/**
 * One benchmark case: a GEMM {@code [M, K] x [K, N]} or a direct NHWC conv2d (input already
 * padded, stride 1, no padding: {@code [1, H, W, C] * [R, R, C, K]}) in one precision, with its
 * Kiln DAG, seeded inputs and a plain-Java reference computed in double (exact for int8).
 * The low-precision DAGs take the weight already packed ({@link LowPrecision}'s layout, packed
 * here in Java once, as a deployed model's constant weight is, and as oneDNN's weight reorder is
 * done outside its timing).
 *
 * @param kind  "gemm" or "conv"
 * @param p     gemm: M, N, K; conv: H, W (padded input), C, K, R
 * @param dtype "int8" (u8 x s8 -> s32), "bf16" (bf16 x bf16 -> f32) or "f32"
 * @param plain a low-precision GEMM written as a plain DSL matmul on B {@code [K, N]} as given (no
 *     {@code LowPrecision} call): the auto-scheduler's {@code DotProductLayout} packs B inside the program on every
 *     call, where the other form reads it packed once in Java
 */
record LowpCase(String kind, long[] p, String dtype, boolean plain) {
    LowpCase {
        if (!kind.equals("gemm") && !kind.equals("conv")) throw new KilnException("lowp: unknown workload " + kind);
        if (!dtype.equals("int8") && !dtype.equals("bf16") && !dtype.equals("f32")) {
            throw new KilnException("lowp: unknown precision " + dtype + " (int8, bf16 or f32)");
        }
        if (plain && !kind.equals("gemm")) throw new KilnException("lowp --plain: the GEMM only, not " + kind);
    }

    LowpCase(String kind, long[] p, String dtype) {
        this(kind, p, dtype, false);
    }

    String workload() {
        return kind.equals("gemm")
                ? "GEMM " + p[0] + "x" + p[1] + "x" + p[2] + (lowPrecisionPlain() ? " plain" : "")
                : "conv 1x" + p[0] + "x" + p[1] + "x" + p[2] + "->" + p[3] + " " + p[4] + "x" + p[4];
    }

    /** A short file-name-safe id. */
    String id() {
        return kind + "-"
                + String.join(
                        "x", java.util.Arrays.stream(p).mapToObj(Long::toString).toList()) + "-" + dtype
                + (lowPrecisionPlain() ? "-plain" : "");
    }

    /** A low-precision GEMM in the plain form ({@link #plain} with int8 or bf16; float32 is plain anyway). */
    boolean lowPrecisionPlain() {
        return plain && !dtype.equals("f32");
    }

    long outH() {
        return p[0] - p[4] + 1;
    }

    long outW() {
        return p[1] - p[4] + 1;
    }

    /** Multiply-adds times 2. */
    double ops() {
        return kind.equals("gemm") ? 2.0 * p[0] * p[1] * p[2] : 2.0 * outH() * outW() * p[3] * p[4] * p[4] * p[2];
    }

    DType inType() {
        return switch (dtype) {
            case "int8" -> DType.UINT8;
            case "bf16" -> DType.BFLOAT16;
            default -> DType.FLOAT32;
        };
    }

    DType weightType() {
        return switch (dtype) {
            case "int8" -> DType.INT8;
            case "bf16" -> DType.BFLOAT16;
            default -> DType.FLOAT32;
        };
    }

    DType outType() {
        return dtype.equals("int8") ? DType.INT32 : DType.FLOAT32;
    }

    long[] inShape() {
        return kind.equals("gemm") ? new long[] {p[0], p[2]} : new long[] {1, p[0], p[1], p[2]};
    }

    /** The weight in its plain layout: gemm [K, N]; conv HWIO [R, R, C, K]. */
    long[] weightShape() {
        return kind.equals("gemm") ? new long[] {p[2], p[1]} : new long[] {p[4], p[4], p[2], p[3]};
    }

    long[] outShape() {
        return kind.equals("gemm") ? new long[] {p[0], p[1]} : new long[] {1, outH(), outW(), p[3]};
    }

    private int group() {
        return dtype.equals("f32") ? 1 : LowPrecision.group(inType());
    }

    /** Shape of the packed weight (gemm [N/16, K/g, 16, g]; conv [K/16, R, R, C/g, 16, g]). */
    long[] packedShape() {
        int g = group();
        long l = LowPrecision.LANES;
        return kind.equals("gemm")
                ? new long[] {p[1] / l, p[2] / g, l, g}
                : new long[] {p[3] / l, p[4], p[4], p[2] / g, l, g};
    }

    ComputeDAG dag() {
        Tensor x = Te.placeholder("x", inType(), inShape());
        if (dtype.equals("f32")) {
            Tensor w = Te.placeholder("w", DType.FLOAT32, weightShape());
            return ComputeDAG.of(kind.equals("gemm") ? Linalg.matmul(x, w) : Conv.conv2dNhwc(x, w, 1, 0));
        }
        if (lowPrecisionPlain()) {
            Tensor w = Te.placeholder("w", weightType(), weightShape());
            DType acc = LowPrecision.accumulator(inType());
            return ComputeDAG.of(Te.compute("matmul", Shape.of(p[0], p[1]), (i, j) -> {
                IterVar k = Te.reduceAxis(p[2], "k");
                return Te.sum(k, x.at(i, k).cast(acc).mul(w.at(k, j).cast(acc)));
            }));
        }
        Tensor w = Te.placeholder("w_packed", weightType(), packedShape());
        return ComputeDAG.of(
                kind.equals("gemm") ? LowPrecision.matmulPacked(x, w) : LowPrecision.conv2dPacked(x, w, 1));
    }

    /** Seeded inputs: u8 in [0, 255], s8 in [-128, 127], bf16 and f32 in [-1, 1]. */
    NDArray input(long seed) {
        return fill(NDArray.allocate(inType(), inShape()), seed);
    }

    NDArray weight(long seed) {
        return fill(NDArray.allocate(weightType(), weightShape()), seed);
    }

    private static NDArray fill(NDArray a, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < a.numElements(); i++) {
            switch (a.dtype()) {
                case UINT8 -> a.setLongFlat(r.nextInt(256), i);
                case INT8 -> a.setLongFlat(r.nextInt(256) - 128, i);
                default -> a.setDoubleFlat(r.nextDouble(-1, 1), i);
            }
        }
        return a;
    }

    /** The weight in the layout the DAG reads (packed for int8/bf16; itself for f32 and the plain form). */
    NDArray packed(NDArray w) {
        if (dtype.equals("f32") || lowPrecisionPlain()) return w;
        NDArray out = NDArray.allocate(weightType(), packedShape());
        int g = group();
        long l = LowPrecision.LANES;
        long[] ps = packedShape();
        for (long i = 0; i < out.numElements(); i++) {
            long[] q = out.unravel(i);
            double v;
            if (kind.equals("gemm")) {
                v = w.getDouble(q[1] * g + q[3], q[0] * l + q[2]);
            } else {
                v = w.getDouble(q[1], q[2], q[3] * g + q[5], q[0] * l + q[4]);
            }
            out.setDoubleFlat(v, i);
        }
        if (ps.length != out.rank()) throw new IllegalStateException();
        return out;
    }

    /** out = x * w in double (every product of two bf16 or 8-bit values is exact in double). */
    NDArray reference(NDArray x, NDArray w) {
        double[] xs = x.toDoubleArray(), ws = w.toDoubleArray();
        NDArray out = NDArray.allocate(outType(), outShape());
        if (kind.equals("gemm")) {
            int m = (int) p[0], n = (int) p[1], k = (int) p[2];
            double[] row = new double[n];
            for (int i = 0; i < m; i++) {
                java.util.Arrays.fill(row, 0);
                for (int kk = 0; kk < k; kk++) {
                    double a = xs[i * k + kk];
                    for (int j = 0; j < n; j++) row[j] += a * ws[kk * n + j];
                }
                for (int j = 0; j < n; j++) out.setDoubleFlat(row[j], (long) i * n + j);
            }
            return out;
        }
        int h = (int) p[0], wd = (int) p[1], c = (int) p[2], k = (int) p[3], r = (int) p[4];
        int oh = (int) outH(), ow = (int) outW();
        double[] acc = new double[k];
        for (int y = 0; y < oh; y++) {
            for (int xq = 0; xq < ow; xq++) {
                java.util.Arrays.fill(acc, 0);
                for (int ry = 0; ry < r; ry++) {
                    for (int rx = 0; rx < r; rx++) {
                        int base = ((y + ry) * wd + xq + rx) * c;
                        for (int cc = 0; cc < c; cc++) {
                            double a = xs[base + cc];
                            int wb = ((ry * r + rx) * c + cc) * k;
                            for (int o = 0; o < k; o++) acc[o] += a * ws[wb + o];
                        }
                    }
                }
                for (int o = 0; o < k; o++) out.setDoubleFlat(acc[o], ((long) y * ow + xq) * k + o);
            }
        }
        return out;
    }
}
