package dev.kiln.schedule.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.LowPrecisionData;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Store;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link PackFolding}: a {@code layout_pack} stage of a constant weight leaves the program (no store to the packed
 * buffer in the lowered function, the packed constant a parameter at the weight's position) and
 * {@link LayoutRewrite.Result#transformArguments} packs the weight once; the folded program's results equal the
 * unfolded program's (int8 also plain Java's, exactly).
 */
class PackFoldingTest {
    /** Stores per buffer name in the lowered default program of {@code dag}. */
    static Map<String, Integer> stores(ComputeDAG dag) {
        PrimFunc f = Lowering.lower("f", Schedule.empty(dag));
        Map<String, Integer> out = new TreeMap<>();
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof Store st) out.merge(st.buffer().name(), 1, Integer::sum);
                visitChildren(s);
            }
        }.visit(f.body());
        return out;
    }

    static NDArray run(ComputeDAG dag, List<NDArray> args) {
        Interpreter.run(Lowering.lower("f", Schedule.empty(dag)), args.toArray(NDArray[]::new));
        return args.getLast();
    }

    private static List<NDArray> foldedArguments(PackFolding.Folded f, List<NDArray> original) {
        Schedule s = Schedule.empty(f.dag());
        return new LayoutRewrite.Result(s, List.of(), List.of())
                .withFolds(f.folds())
                .transformArguments(original);
    }

    @Test
    void int8DenseReadsThePackedConstantAndIsExact() {
        int m = 10, n = 32, k = 24;
        Tensor x = Te.placeholder("x", DType.UINT8, m, k);
        Tensor w = Te.placeholder("w", DType.INT8, n, k);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        assertThat(stores(dag)).containsKey("packed_w");

        PackFolding.Folded f = PackFolding.fold(dag, Set.of(w));
        assertThat(f.folded()).isTrue();
        assertThat(f.positions()).containsExactly(1);
        assertThat(f.dag().ops()).noneMatch(o -> o instanceof ComputeOp c && PackFolding.PACK_TAG.equals(c.tag()));
        Tensor packed = f.dag().arguments().get(1);
        assertThat(packed.isPlaceholder()).isTrue();
        assertThat(packed.name()).isEqualTo("packed_w");
        assertThat(packed.shape().toArray()).containsExactly(2, 6, 16, 4);
        assertThat(stores(f.dag())).as("the pack loop is gone").containsOnlyKeys("matmul_packed");
        assertThat(f.folds().getFirst().toString()).contains("w[32, 24]", "packed_w", "[2, 6, 16, 4]");

        NDArray xs = LowPrecisionData.full(DType.UINT8, 11, m, k);
        NDArray ws = LowPrecisionData.full(DType.INT8, 12, n, k);
        List<NDArray> args = foldedArguments(f, List.of(xs, ws, NDArray.allocate(DType.INT32, m, n)));
        assertThat(args.get(1).shape()).containsExactly(2, 6, 16, 4);
        assertThat(args.get(0)).isSameAs(xs);
        NDArray out = run(f.dag(), args);
        long[] ref = LowPrecisionData.denseInt(xs, ws);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(ref[i * n + j]);
    }

    @Test
    void bf16DenseAndInt8ConvEqualTheUnfoldedPrograms() {
        int m = 6, n = 16, k = 10;
        Tensor x = Te.placeholder("x", DType.BFLOAT16, m, k);
        Tensor w = Te.placeholder("w", DType.BFLOAT16, n, k);
        ComputeDAG dense = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        NDArray xs = NDArray.random(DType.BFLOAT16, 21, m, k);
        NDArray ws = NDArray.random(DType.BFLOAT16, 22, n, k);
        PackFolding.Folded fd = PackFolding.fold(dense, Set.of(w));
        assertThat(stores(fd.dag())).containsOnlyKeys("matmul_packed");
        NDArray folded = run(fd.dag(), foldedArguments(fd, List.of(xs, ws, NDArray.allocate(DType.FLOAT32, m, n))));
        NDArray plain = run(dense, List.of(xs, ws, NDArray.allocate(DType.FLOAT32, m, n)));
        // the pack is a copy and the reduction runs in the same order: the same float32 results, bit for bit
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                assertThat(folded.getDouble(i, j)).as("out[%d, %d]", i, j).isEqualTo(plain.getDouble(i, j));

        Tensor xi = Te.placeholder("xi", DType.UINT8, 1, 6, 6, 8);
        Tensor wc = Te.placeholder("wc", DType.INT8, 3, 3, 8, 16);
        ComputeDAG conv = ComputeDAG.of(LowPrecision.conv2dPacked(xi, LowPrecision.packConv2dWeight(wc), 1));
        PackFolding.Folded fc = PackFolding.fold(conv, Set.of(wc));
        assertThat(fc.folds())
                .singleElement()
                .satisfies(fo -> assertThat(fo.folded().shape().toArray()).containsExactly(1, 3, 3, 2, 16, 4));
        assertThat(stores(fc.dag())).doesNotContainKey("packed_wc");
        NDArray xv = LowPrecisionData.full(DType.UINT8, 23, 1, 6, 6, 8);
        NDArray wv = LowPrecisionData.full(DType.INT8, 24, 3, 3, 8, 16);
        NDArray a = run(fc.dag(), foldedArguments(fc, List.of(xv, wv, NDArray.allocate(DType.INT32, 1, 4, 4, 16))));
        NDArray b = run(conv, List.of(xv, wv, NDArray.allocate(DType.INT32, 1, 4, 4, 16)));
        for (long e = 0; e < b.numElements(); e++) assertThat(a.getLongFlat(e)).isEqualTo(b.getLongFlat(e));
    }

    @Test
    void onlyAPackOfAConstantReadByNothingElseIsFolded() {
        Tensor x = Te.placeholder("x", DType.UINT8, 4, 8);
        Tensor w = Te.placeholder("w", DType.INT8, 16, 8);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        // not a constant: nothing folded, the same DAG
        PackFolding.Folded none = PackFolding.fold(dag, Set.of());
        assertThat(none.folded()).isFalse();
        assertThat(none.dag()).isSameAs(dag);
        // a constant that another stage also reads keeps its pack stage
        Tensor w2 = Te.placeholder("w", DType.INT8, 16, 8);
        ComputeDAG shared =
                ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w2)), Elementwise.add(w2, w2));
        assertThat(PackFolding.fold(shared, Set.of(w2)).folded()).isFalse();
        // the pack stage as an output of the DAG stays
        ComputeDAG packOnly = ComputeDAG.of(LowPrecision.packDenseWeight(w));
        assertThat(PackFolding.fold(packOnly, Set.of(w)).folded()).isFalse();
        // a tensor that is no placeholder of the DAG, and an array of the wrong shape, are refused by name
        Tensor other = Te.placeholder("other", DType.INT8, 16, 8);
        assertThatThrownBy(() -> PackFolding.fold(dag, Set.of(other)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'other'");
        PackFolding.Fold fold = PackFolding.fold(dag, Set.of(w)).folds().getFirst();
        assertThatThrownBy(() -> fold.apply(NDArray.allocate(DType.INT8, 16, 4)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'w'")
                .hasMessageContaining("[16, 4]");
    }
}
