package dev.kiln.bench.suite;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.ir.IterVar;
import dev.kiln.nn.Activation;
import dev.kiln.nn.CapsuleConv;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.ConvTranspose;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Softmax;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The Kiln computation of each suite workload, built from the operator library as the Ansor
 * evaluation defines it (float32, channels last; TVM's weight layouts: HWIO for convs, HWIO with
 * I = CI/groups for grouped ones, HWCM for depthwise, [KH, KW, CI, CO] for the transposed conv,
 * HWKJCO for the capsule conv). Input names ("data", "weight", "X", "Y", "A", "bias", "bn_scale",
 * "bn_offset", "query", "value") are what the baselines look up.
 */
public final class SuiteDags {
    private SuiteDags() {}

    /** The DAG of a workload. */
    public static ComputeDAG of(SuiteWorkload w) {
        return ComputeDAG.of(output(w));
    }

    private static Tensor output(SuiteWorkload w) {
        return switch (w.op()) {
            case "C1D" ->
                Conv.conv1dNlc(
                        ph("data", w.p(0), w.p(1), w.p(2)), ph("weight", w.p(4), w.p(2), w.p(3)), w.p(5), w.p(6));
            case "C2D" -> conv2d(w, ConvParams.of(2, w.p(6), w.p(7)), 1);
            case "GRP" -> conv2d(w, ConvParams.of(2, w.p(6), w.p(7)).withGroups(4), 4);
            case "DIL" -> conv2d(w, ConvParams.of(2, w.p(6), w.p(7)).withDilation(2), 1);
            case "C3D" ->
                Conv.conv3dNdhwc(
                        ph("data", w.p(0), w.p(1), w.p(2), w.p(3), w.p(4)),
                        ph("weight", w.p(6), w.p(6), w.p(6), w.p(4), w.p(5)),
                        w.p(7),
                        w.p(8));
            case "GMM" -> Linalg.batchMatmul(ph("X", w.p(0), w.p(1), w.p(3)), ph("Y", w.p(0), w.p(3), w.p(2)));
            case "DEP" ->
                Conv.depthwiseConv2dNhwc(
                        ph("data", w.p(0), w.p(1), w.p(2), w.p(3)),
                        ph("weight", w.p(4), w.p(4), w.p(3), 1),
                        w.p(5),
                        w.p(6));
            case "T2D" ->
                ConvTranspose.conv2dTransposeNhwc(
                        ph("data", w.p(0), w.p(1), w.p(2), w.p(3)),
                        ph("weight", w.p(5), w.p(5), w.p(3), w.p(4)),
                        w.p(6),
                        w.p(7));
            case "CAP" ->
                CapsuleConv.conv2dCapsuleNhwijc(
                        ph("data", w.p(0), w.p(1), w.p(2), CAPSULE, CAPSULE, w.p(3)),
                        ph("weight", w.p(5), w.p(5), CAPSULE, CAPSULE, w.p(3), w.p(4)),
                        w.p(6),
                        w.p(7));
            case "NRM" -> Linalg.norm(ph("A", w.p(0), w.p(1), w.p(2)));
            case "SFM" -> Softmax.softmax(ph("A", w.p(0), w.p(1)), 1);
            case "ConvLayer" -> convLayer(w);
            case "TBS" -> transposeBatchMatmulSoftmax(w);
            default -> throw new IllegalStateException(w.op());
        };
    }

    /**
     * The inputs of a workload that Kiln treats as layout-free constants when the suite runs with {@code
     * --layout-free}: the weight of every conv oneDNN runs (it reorders that weight into its own layout once,
     * outside the timing, {@code format_tag::any}); none for the other workloads (GMM's operands are both
     * activations in the Ansor evaluation, and oneDNN has no capsule conv).
     */
    public static List<String> layoutFree(SuiteWorkload w) {
        return switch (w.op()) {
            case "C1D", "C2D", "GRP", "DIL", "C3D", "DEP", "T2D", "ConvLayer" -> List.of("weight");
            default -> List.of();
        };
    }

    /** The capsule size of the CAP workloads (4x4 pose matrices). */
    static final long CAPSULE = 4;

    private static Tensor conv2d(SuiteWorkload w, ConvParams p, long groups) {
        return Conv.conv2dNhwc(
                ph("data", w.p(0), w.p(1), w.p(2), w.p(3)), ph("weight", w.p(5), w.p(5), w.p(3) / groups, w.p(4)), p);
    }

    /** Ansor's conv2d_nhwc_bn_relu: conv, + bias, * bn_scale, + bn_offset, relu (per output channel). */
    private static Tensor convLayer(SuiteWorkload w) {
        long co = w.p(4);
        Tensor conv = Conv.conv2dNhwc(
                ph("data", w.p(0), w.p(1), w.p(2), w.p(3)), ph("weight", w.p(5), w.p(5), w.p(3), co), w.p(6), w.p(7));
        Tensor biased = Elementwise.biasAdd(conv, ph("bias", co), 3);
        Tensor scaled = Elementwise.multiply(biased, ph("bn_scale", co));
        return Activation.relu(Elementwise.add(scaled, ph("bn_offset", co)));
    }

    /**
     * Ansor's transpose_batch_matmul_softmax: query and value [B, L, H, D]; scores[b, h, i, j] =
     * sum_d query[b, i, h, d] * value[b, j, h, d], then softmax over j.
     */
    private static Tensor transposeBatchMatmulSoftmax(SuiteWorkload w) {
        long b = w.p(0), l = w.p(1), h = w.p(2), d = w.p(3);
        Tensor q = ph("query", b, l, h, d);
        Tensor v = ph("value", b, l, h, d);
        Tensor qt = Te.compute("query_T", Shape.of(b, h, l, d), (bb, hh, ll, dd) -> q.at(bb, ll, hh, dd));
        Tensor vt = Te.compute("value_T", Shape.of(b, h, d, l), (bb, hh, dd, ll) -> v.at(bb, ll, hh, dd));
        IterVar k = Te.reduceAxis(d, "k");
        Tensor scores = Te.compute(
                "scores",
                Shape.of(b, h, l, l),
                (bb, hh, i, j) -> Te.sum(k, qt.at(bb, hh, i, k).mul(vt.at(bb, hh, k, j))));
        return Softmax.softmax(scores, 3);
    }

    private static Tensor ph(String name, long... shape) {
        return Te.placeholder(name, FLOAT32, shape);
    }
}
