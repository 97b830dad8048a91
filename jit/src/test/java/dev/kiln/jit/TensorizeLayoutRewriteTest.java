package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.schedule.layout.PackFolding;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Store;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A tensorized GEMM whose weight is a layout-free constant handed over packed
 * ({@code w_packed [N/16, K/g, 16, g]}, packed once outside the program, as {@code bench lowp} and
 * a network's build do): Ansor's layout rewrite ({@link LayoutRewrite}, on as for a network task)
 * keeps the intrinsic's layout (the tensorized stage reads the weight through floordiv/floormod,
 * so the rewrite leaves it alone, saying why), the rewritten program takes the weight in that
 * packed layout and is exact against plain Java on the unpacked weight (bf16 within the bound of
 * {@link TensorizeJitTest}). Row-tail tiles (6 x 4 int8, 14 x 2 bf16) as the search draws them.
 */
class TensorizeLayoutRewriteTest {
    private static final CpuTarget HOST = LlvmBackend.hostTarget();
    private final LlvmBackend llvm = new LlvmBackend();

    private static void assume(String intrinsic) {
        String why = TensorIntrinsics.get(intrinsic).unavailableReason(HOST);
        assumeTrue(why == null, why);
    }

    /** {@code w [n, k]} packed to {@code [n/16, k/g, 16, g]} in plain Java. */
    static NDArray pack(NDArray w, int g) {
        long n = w.shape()[0], k = w.shape()[1];
        NDArray p = NDArray.allocate(w.dtype(), n / 16, k / g, 16, g);
        for (long j = 0; j < n; j++)
            for (long q = 0; q < k; q++) p.setDouble(w.getDouble(j, q), j / 16, q / g, j % 16, q % g);
        return p;
    }

    private static LayoutRewrite.Result rewrite(DType a, DType b, int m, int n, int k, int rows, int vectors) {
        String intrinsic = a == DType.UINT8 ? TensorIntrinsics.VNNI_U8S8 : TensorIntrinsics.BF16_DOT;
        int g = a == DType.UINT8 ? 4 : 2;
        Tensor x = Te.placeholder("x", a, m, k);
        Tensor wp = Te.placeholder("w_packed", b, n / 16, k / g, 16, g);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, wp));
        Schedule s = TensorizeRowTailTest.tile(dag, intrinsic, m, n, rows, 1, vectors);
        LayoutRewrite.Result r = LayoutRewrite.rewrite(s, Set.of(wp));
        assertThat(r.rewritten())
                .as("the packed weight keeps the intrinsic's layout")
                .isFalse();
        assertThat(r.skipped()).singleElement().satisfies(sk -> assertThat(sk.placeholder())
                .isSameAs(wp));
        assertThat(r.schedule().dag().arguments().get(1).shape().toArray()).containsExactly(n / 16, k / g, 16, g);
        return r;
    }

    @Test
    void int8WeightPackedOnceKeepsItsLayoutAndIsExact() {
        assume(TensorIntrinsics.VNNI_U8S8);
        int m = 50, n = 64, k = 128;
        LayoutRewrite.Result r = rewrite(DType.UINT8, DType.INT8, m, n, k, 6, 4);
        NDArray x = TensorizeFixture.full(DType.UINT8, 71, m, k);
        NDArray w = TensorizeFixture.full(DType.INT8, 72, n, k);
        List<NDArray> args = r.transformArguments(List.of(x, pack(w, 4), NDArray.allocate(DType.INT32, m, n)));
        try (LlvmKernel kern = llvm.compile(Lowering.lower("vnni_lr", r.schedule()), HOST)) {
            kern.call(args.toArray(NDArray[]::new));
            assertThat(kern.source()).contains("vpdpbusd");
        }
        NDArray out = args.get(2);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int acc = 0;
                for (int q = 0; q < k; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
            }
    }

    @Test
    void bf16WeightPackedOnceKeepsItsLayoutWithinTheBound() {
        assume(TensorIntrinsics.BF16_DOT);
        int m = 30, n = 64, kk = 96;
        LayoutRewrite.Result r = rewrite(DType.BFLOAT16, DType.BFLOAT16, m, n, kk, 14, 2);
        TensorizeFixture.Bf16Inputs in = TensorizeFixture.Bf16Inputs.random(73, 74, m, n, kk);
        List<NDArray> args =
                r.transformArguments(List.of(in.x(), pack(in.w(), 2), NDArray.allocate(DType.FLOAT32, m, n)));
        try (LlvmKernel kern = llvm.compile(Lowering.lower("bf16_lr", r.schedule()), HOST)) {
            kern.call(args.toArray(NDArray[]::new));
            assertThat(kern.source()).contains("vdpbf16ps");
        }
        in.assertWithinBound(args.get(2), m, n, kk);
    }

    /** Stores per buffer name in {@code f}. */
    private static java.util.Map<String, Integer> stores(PrimFunc f) {
        java.util.Map<String, Integer> out = new java.util.TreeMap<>();
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof Store st) out.merge(st.buffer().name(), 1, Integer::sum);
                visitChildren(s);
            }
        }.visit(f.body());
        return out;
    }

    /**
     * A constant weight given as {@code matmulPacked(x, packDenseWeight(w))}: folded ({@link PackFolding}), the
     * tensorized program reads the packed constant and has no pack loop (the unfolded one stores {@code packed_w});
     * the original weight, packed once by {@code transformArguments}, gives exact int8 and bf16-within-bound results.
     */
    @Test
    void aConstantWeightsPackStageIsFoldedOutOfTheTensorizedProgram() {
        List<String> missing = new java.util.ArrayList<>();
        for (DType a : List.of(DType.UINT8, DType.BFLOAT16)) {
            boolean int8 = a == DType.UINT8;
            String intrinsic = int8 ? TensorIntrinsics.VNNI_U8S8 : TensorIntrinsics.BF16_DOT;
            String why = TensorIntrinsics.get(intrinsic).unavailableReason(HOST);
            if (why != null) {
                missing.add(why);
                continue;
            }
            int m = 30, n = 64, k = 96;
            ComputeDAG dag = TensorizeFixture.packedDense(a, int8 ? DType.INT8 : DType.BFLOAT16, m, n, k);
            Tensor w = dag.arguments().get(1);
            PackFolding.Folded folded = PackFolding.fold(dag, Set.of(w));
            assertThat(folded.folds()).singleElement();
            Schedule plain = TensorizeRowTailTest.tile(dag, intrinsic, m, n, 6, 1, 4);
            assertThat(stores(Lowering.lower("plain", plain))).containsKey("packed_w");
            Schedule s = TensorizeRowTailTest.tile(folded.dag(), intrinsic, m, n, 6, 1, 4);
            LayoutRewrite.Result r = LayoutRewrite.rewrite(
                            s, Set.of(folded.dag().arguments().get(1)))
                    .withFolds(folded.folds());
            PrimFunc f = Lowering.lower(int8 ? "vnni_fold" : "bf16_fold", r.schedule());
            assertThat(stores(f)).as("no pack loop").containsOnlyKeys("matmul_packed");
            TensorizeFixture.Bf16Inputs in = TensorizeFixture.Bf16Inputs.random(75, 76, m, n, k);
            NDArray x = int8 ? TensorizeFixture.full(DType.UINT8, 77, m, k) : in.x();
            NDArray wv = int8 ? TensorizeFixture.full(DType.INT8, 78, n, k) : in.w();
            List<NDArray> args =
                    r.transformArguments(List.of(x, wv, NDArray.allocate(int8 ? DType.INT32 : DType.FLOAT32, m, n)));
            assertThat(args.get(1).shape()).containsExactly(n / 16, k / (int8 ? 4 : 2), 16, int8 ? 4 : 2);
            try (LlvmKernel kern = llvm.compile(f, HOST)) {
                kern.call(args.toArray(NDArray[]::new));
                assertThat(kern.source()).contains(int8 ? "vpdpbusd" : "vdpbf16ps");
            }
            NDArray out = args.get(2);
            if (!int8) {
                in.assertWithinBound(out, m, n, k);
                continue;
            }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    int acc = 0;
                    for (int q = 0; q < k; q++) acc += (int) x.getLong(i, q) * (int) wv.getLong(j, q);
                    assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
                }
        }
        assumeTrue(missing.size() < 2, String.join("; ", missing));
    }
}
