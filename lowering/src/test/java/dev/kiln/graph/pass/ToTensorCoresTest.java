package dev.kiln.graph.pass;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.Op;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link ToTensorCores}: which convolutions become half-precision implicit GEMMs and which stay float32 (and why),
 * the GEMMs' rows and columns rounded up to 16 and sliced back, and the numbers: a small residual CNN (a 3-channel
 * 3x3 stem, a depthwise conv kept, a strided 1x1 projection to 24 channels, a residual add, a dense classifier of 10
 * units as a 1x1 GEMM) stays within the half
 * type's rounding of its float32 result: 2^-7 of the largest output for float16 (11 significant bits, sums of up
 * to 144 products), 2^-5 for bfloat16 (8 bits). A wrong im2col or weight order is off by O(1).
 */
class ToTensorCoresTest {

    static Graph residualCnn() {
        GraphBuilder b = new GraphBuilder("tc_cnn");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 3);
        Value c1 = b.relu(
                "r1",
                b.biasAdd(
                        "b1",
                        b.conv2d("c1", x, b.weight("w1", 1, 0.4, 3, 3, 3, 16), "NHWC", 1, 1, 1),
                        b.weight("bias1", 2, 0.5, 16),
                        3));
        Value dw = b.relu("r2", b.conv2d("dw", c1, b.weight("w2", 3, 0.4, 3, 3, 1, 16), "NHWC", 1, 1, 16));
        Value c3 = b.conv2d("c3", dw, b.weight("w3", 4, 0.3, 3, 3, 16, 16), "NHWC", 1, 1, 1);
        Value sum = b.relu("r3", b.add("res", c3, c1));
        Value proj = b.conv2d("proj", sum, b.weight("w4", 5, 0.3, 1, 1, 16, 24), "NHWC", 2, 0, 1);
        Value pooled = b.mean("gap", proj, false, 1, 2);
        return b.output(b.dense("fc", pooled, b.weight("wf", 6, 0.3, 10, 24))).build();
    }

    @ParameterizedTest
    @EnumSource(names = {"FLOAT16", "BFLOAT16"})
    void aResidualCnnStaysWithinTheHalfTypesRounding(DType half) {
        Graph net = residualCnn();
        ToTensorCores.Result r = ToTensorCores.apply(net, half);
        assertThat(r.converted()).containsExactly("c1", "c3", "proj", "fc");
        assertThat(r.kept()).containsOnlyKeys("dw");
        assertThat(r.kept().get("dw")).contains("16 groups");
        Graph g = r.graph();
        assertThat(g.nodes().stream().filter(n -> n.op() instanceof Op.Conv2dGemm))
                .hasSize(4);
        // fc: [1, 24] x [10, 24]^T as a 1x1 conv of a 1 x 1 image: 16 rows, 16 columns, sliced to [1, 10]
        assertThat(g.value("fc.gemm").shape()).containsExactly(16L, 16L);
        assertThat(g.producer("fc").op()).isInstanceOf(Op.StridedSlice.class);
        assertThat(g.producer(g.producer(half == DType.FLOAT16 ? "gap.f16" : "gap.bf16")
                                .inputs()
                                .getFirst())
                        .op())
                .isInstanceOf(Op.Reshape.class);
        // c1: 64 pixels x 16 channels, K = 27 taps padded to 32: no slice; proj: 16 pixels, 24 channels -> 32
        assertThat(g.value("c1.gemm").shape()).containsExactly(64L, 16L);
        assertThat(g.value("proj.gemm").shape()).containsExactly(16L, 32L);
        assertThat(g.producer("proj.sliced").op()).isInstanceOf(Op.StridedSlice.class);
        // c1's bias and ReLU run on its GEMM's rows ([16] bias on axis 1); r1 has two readers, so it is float32 NHWC
        assertThat(g.producer("b1.rows").op()).isEqualTo(new Op.BiasAdd(1));
        assertThat(g.producer("r1.rows").inputs()).containsExactly("b1.rows");
        assertThat(g.producer("r1").op()).isInstanceOf(Op.Reshape.class);
        assertThat(g.value("r1").dtype()).isEqualTo(FLOAT32);
        assertThat(g.producer("proj").op()).isInstanceOf(Op.Reshape.class);
        assertThat(g.value("proj").shape()).containsExactly(1L, 4L, 4L, 24L);
        assertThat(g.constants().values())
                .filteredOn(a -> a.dtype() == half)
                .extracting(a -> a.shape()[0])
                .containsExactlyInAnyOrder(32L, 144L, 16L, 32L); // 27, 144, 16 and 24 taps, rounded up to 16
        // one cast per activation read by a converted layer
        assertThat(g.nodes().stream().filter(n -> n.op() instanceof Op.Cast)).hasSize(4);
        try (NodeRunner ref = NodeRunner.interpreter();
                NDArray in = NDArray.random(FLOAT32, 11, 1, 8, 8, 3)) {
            NDArray y32 = ReferenceExecutor.run(net, ref, in).getFirst();
            NDArray yh = ReferenceExecutor.run(g, ref, in).getFirst();
            double max = 0, err = 0;
            for (long i = 0; i < y32.numElements(); i++) {
                max = Math.max(max, Math.abs(y32.getDoubleFlat(i)));
                err = Math.max(err, Math.abs(y32.getDoubleFlat(i) - yh.getDoubleFlat(i)));
            }
            assertThat(max).isGreaterThan(0.01);
            assertThat(err)
                    .isLessThanOrEqualTo(Math.scalb(max, half == DType.FLOAT16 ? -7 : -5))
                    .isGreaterThan(0);
        }
    }

    /**
     * conv 3x3 (16 -> 16, bias, ReLU) -> conv 1x1 (16 -> 24, bias) -> conv 1x1 (24 -> 16): each layer's bias and ReLU
     * run on its GEMM's rows, and where the next layer is the only reader its cast does too, so the reshape to NHWC
     * reads half-precision rows (a view where nothing was rounded up); the 24 channels are sliced from 32 first, with
     * the bias padded by zeros. Within float16's rounding of the float32 chain.
     */
    @Test
    void aChainOfLayersCastsOnTheGemmRows() {
        GraphBuilder b = new GraphBuilder("tc_chain");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 16);
        Value a = b.relu(
                "ra",
                b.biasAdd(
                        "ba",
                        b.conv2d("a", x, b.weight("wa", 1, 0.3, 3, 3, 16, 16), "NHWC", 1, 1, 1),
                        b.weight("bias_a", 2, 0.5, 16),
                        3));
        Value c = b.biasAdd(
                "bb",
                b.conv2d("b", a, b.weight("wb", 3, 0.3, 1, 1, 16, 24), "NHWC", 1, 0, 1),
                b.weight("bias_b", 4, 0.5, 24),
                3);
        Graph net = b.output(b.conv2d("c", c, b.weight("wc", 5, 0.3, 1, 1, 24, 16), "NHWC", 1, 0, 1))
                .build();
        ToTensorCores.Result r = ToTensorCores.apply(net, DType.FLOAT16);
        assertThat(r.converted()).containsExactly("a", "b", "c");
        Graph g = r.graph();
        // a: gemm -> bias -> relu -> cast on [64, 16] rows, reshaped (a view) to b's half input
        assertThat(g.producer("ra.rows").op()).isEqualTo(new Op.Unary(Op.UnaryKind.RELU));
        assertThat(g.producer("ra.f16.rows").op()).isEqualTo(new Op.Cast(DType.FLOAT16));
        assertThat(g.producer("ra.f16").op()).isInstanceOf(Op.Reshape.class);
        assertThat(g.value("ra.f16").dtype()).isEqualTo(DType.FLOAT16);
        assertThat(g.producer("b.gemm").inputs().getFirst()).isEqualTo("ra.f16");
        // b: 24 channels computed as 32, its bias padded, the cast before the slice
        assertThat(g.value("b.gemm").shape()).containsExactly(64L, 32L);
        assertThat(g.constant(g.producer("bb.rows").inputs().get(1)).shape()).containsExactly(32);
        assertThat(g.producer("bb.sliced").inputs()).containsExactly("bb.f16.rows");
        assertThat(g.nodes().stream().filter(n -> n.op() instanceof Op.Cast)).hasSize(3);
        try (NodeRunner ref = NodeRunner.interpreter();
                NDArray in = NDArray.random(FLOAT32, 12, 1, 8, 8, 16)) {
            NDArray y32 = ReferenceExecutor.run(net, ref, in).getFirst();
            NDArray yh = ReferenceExecutor.run(g, ref, in).getFirst();
            double max = 0, err = 0;
            for (long i = 0; i < y32.numElements(); i++) {
                max = Math.max(max, Math.abs(y32.getDoubleFlat(i)));
                err = Math.max(err, Math.abs(y32.getDoubleFlat(i) - yh.getDoubleFlat(i)));
            }
            assertThat(err).isLessThanOrEqualTo(Math.scalb(max, -7)).isGreaterThan(0);
        }
    }

    @Test
    void theGemmWeightIsTheHwioWeightInOrderPaddedWithZeros() {
        NDArray w = GraphBuilder.randomArray(9, -1, 1, 2, 3, 5, 7);
        NDArray g = ToTensorCores.gemmWeight(w, DType.FLOAT16, 32, 16);
        assertThat(g.shape()).containsExactly(32, 16);
        for (int kh = 0; kh < 2; kh++)
            for (int kw = 0; kw < 3; kw++)
                for (int c = 0; c < 5; c++)
                    for (int o = 0; o < 16; o++) {
                        double want = o < 7 ? w.getDouble(kh, kw, c, o) : 0;
                        assertThat(g.getDouble((kh * 3 + kw) * 5 + c, o))
                                .isCloseTo(want, org.assertj.core.data.Offset.offset(Math.abs(want) * 0x1p-10));
                    }
        for (int row = 30; row < 32; row++) assertThat(g.getDouble(row, 0)).isZero();
    }

    @Test
    void theDenseGemmWeightIsTheTransposedWeightPaddedWithZeros() {
        NDArray w = GraphBuilder.randomArray(8, -1, 1, 10, 24);
        NDArray g = ToTensorCores.denseGemmWeight(w, DType.BFLOAT16, 32, 16);
        assertThat(g.shape()).containsExactly(32, 16);
        for (int k = 0; k < 32; k++)
            for (int u = 0; u < 16; u++) {
                double want = k < 24 && u < 10 ? w.getDouble(u, k) : 0;
                assertThat(g.getDouble(k, u))
                        .isCloseTo(want, org.assertj.core.data.Offset.offset(Math.abs(want) * 0x1p-7));
            }
    }

    @Test
    void onlyHalfTypesAreAccepted() {
        assertThatThrownBy(() -> ToTensorCores.apply(residualCnn(), DType.FLOAT32))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("argument 'half' is float32");
    }
}
