package dev.kiln.graph.pass;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.fixtures.TensorCoreNets;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Op;
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
 * units as a 1x1 GEMM; the residual add runs on the rows of the conv before it) stays within the half
 * type's rounding of its float32 result: 2^-7 of the largest output for float16 (11 significant bits, sums of up
 * to 144 products), 2^-5 for bfloat16 (8 bits). A wrong im2col or weight order is off by O(1).
 */
class ToTensorCoresTest {

    @ParameterizedTest
    @EnumSource(names = {"FLOAT16", "BFLOAT16"})
    void aResidualCnnStaysWithinTheHalfTypesRounding(DType half) {
        Graph net = TensorCoreNets.residualCnn();
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
        // c3's residual add and ReLU on its rows too (64 x 16: nothing rounded up), r1 read as rows through a reshape,
        // and proj, r3's only reader, has its cast there: one kernel, the GEMM's
        assertThat(g.producer("res.rows").op()).isEqualTo(new Op.Binary(Op.BinaryKind.ADD));
        assertThat(g.producer("res.rows").inputs()).containsExactlyInAnyOrder("c3.gemm", "r1.as_rows");
        assertThat(g.producer("r1.as_rows").op()).isInstanceOf(Op.Reshape.class);
        assertThat(dev.kiln.graph.fuse.FuseOps.apply(g).toString())
                .contains("conv2d_gemm+add+relu+cast ")
                .doesNotContain("reshape+add");
        assertThat(g.producer("proj").op()).isInstanceOf(Op.Reshape.class);
        assertThat(g.value("proj").shape()).containsExactly(1L, 4L, 4L, 24L);
        assertThat(g.constants().values())
                .filteredOn(a -> a.dtype() == half)
                .extracting(a -> a.shape()[0])
                .containsExactlyInAnyOrder(32L, 144L, 16L, 32L); // 27, 144, 16 and 24 taps, rounded up to 16
        // one cast per activation read by a converted layer
        assertThat(g.nodes().stream().filter(n -> n.op() instanceof Op.Cast)).hasSize(4);
        double[] me = TensorCoreNets.maxAndError(net, g, 11, 1, 8, 8, 3);
        double max = me[0], err = me[1];
        assertThat(max).isGreaterThan(0.01);
        assertThat(err)
                .isLessThanOrEqualTo(Math.scalb(max, half == DType.FLOAT16 ? -7 : -5))
                .isGreaterThan(0);
    }

    /**
     * conv 3x3 (16 -> 16, bias, ReLU) -> conv 1x1 (16 -> 24, bias) -> conv 1x1 (24 -> 16): each layer's bias and ReLU
     * run on its GEMM's rows, and where the next layer is the only reader its cast does too, so the reshape to NHWC
     * reads half-precision rows (a view where nothing was rounded up); the 24 channels are sliced from 32 first, with
     * the bias padded by zeros. Within float16's rounding of the float32 chain.
     */
    @Test
    void aChainOfLayersCastsOnTheGemmRows() {
        Graph net = TensorCoreNets.convChain();
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
        double[] me = TensorCoreNets.maxAndError(net, g, 12, 1, 8, 8, 16);
        double max = me[0], err = me[1];
        assertThat(err).isLessThanOrEqualTo(Math.scalb(max, -7)).isGreaterThan(0);
    }

    /**
     * {@link ToTensorCores.Activations#HALF} on two residual blocks (8x8: 64 rows, nothing rounded up): each block's
     * input, read by a conv and by a residual add, is written in float16 only, by the GEMM kernel that computes it;
     * the residual add on the next GEMM's rows reads it through a view and widens it there. No block input is cast in
     * a kernel of its own (with float32 activations each is), and the output stays within 2^-7 of float32's.
     */
    @Test
    void halfActivationsAreWrittenByTheirGemmsAndWidenedOnTheResidualRows() {
        Graph net = TensorCoreNets.residualBlocks(8);
        ToTensorCores.Result wide = ToTensorCores.apply(net, DType.FLOAT16);
        ToTensorCores.Result narrow = ToTensorCores.apply(net, DType.FLOAT16, ToTensorCores.Activations.HALF);
        assertThat(narrow.converted()).isEqualTo(wide.converted()).containsExactly("c0", "c1", "c2", "c3", "fc");
        assertThat(TensorCoreNets.castKernels(wide.graph())).containsExactlyInAnyOrder("x", "y0", "y1");
        assertThat(TensorCoreNets.castKernels(narrow.graph())).containsExactly("x");
        Graph g = narrow.graph();
        assertThat(g.nodes().stream().map(n -> n.name())).doesNotContain("y0", "y1");
        assertThat(g.value("y0.f16").dtype()).isEqualTo(DType.FLOAT16);
        assertThat(g.producer("y0.f16").op()).isInstanceOf(Op.Reshape.class);
        assertThat(g.producer(g.producer("a1.rows").inputs().get(1)).op()).isEqualTo(new Op.Cast(FLOAT32));
        assertThat(dev.kiln.graph.fuse.FuseOps.apply(g).toString())
                .contains("conv2d_gemm+relu+cast ")
                .contains("conv2d_gemm+cast+add+relu+cast ")
                .contains("conv2d_gemm+cast+add+relu ");
        double[] me = TensorCoreNets.maxAndError(net, g, 13, 1, 8, 8, 16);
        assertThat(me[0]).isGreaterThan(0.01);
        assertThat(me[1]).isLessThanOrEqualTo(Math.scalb(me[0], -7)).isGreaterThan(0);
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
        assertThatThrownBy(() -> ToTensorCores.apply(TensorCoreNets.residualCnn(), DType.FLOAT32))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("argument 'half' is float32");
    }
}
