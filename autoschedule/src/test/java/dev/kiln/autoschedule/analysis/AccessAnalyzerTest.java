package dev.kiln.autoschedule.analysis;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Workloads;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.nn.Norm;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Operation;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ansor's per-operation access predicates (notes §3.2) on small computations. */
class AccessAnalyzerTest {

    private static Operation op(ComputeDAG dag, String name) {
        return dag.ops().stream().filter(o -> o.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void matmulHasReuseAndIsNotSimple() {
        ComputeDAG dag = Workloads.matmul(8, 12, 16);
        AccessAnalyzer a = AccessAnalyzer.of(dag);
        Operation c = op(dag, "matmul"), x = op(dag, "A");
        assertThat(a.isSimpleAccess(c)).isFalse();
        assertThat(a.isStrictlyInlineable(c)).isFalse();
        assertThat(a.needsMultiLevelTiling(c)).isTrue();
        assertThat(a.isOutput(c)).isTrue();
        // a placeholder counts as simple, is not inlineable, not an output
        assertThat(a.isSimpleAccess(x)).isTrue();
        assertThat(a.isStrictlyInlineable(x)).isFalse();
        assertThat(a.isOutput(x)).isFalse();
        assertThat(a.readBy(x).keySet()).containsExactly(c);
        assertThat(a.readFrom(c).keySet()).containsExactly(x, op(dag, "B"));
    }

    @Test
    void conv2dReluPadIsSimpleButBranchesConvHasReuseReluMatchesElementwise() {
        ComputeDAG dag = Workloads.conv2dNhwcRelu(1, 6, 6, 4, 6, 3);
        AccessAnalyzer a = AccessAnalyzer.of(dag);
        Operation pad = op(dag, "pad"), conv = op(dag, "conv2d_nhwc"), relu = op(dag, "relu");
        assertThat(a.isSimpleAccess(pad)).isTrue();
        assertThat(a.access(pad).hasBranch()).isTrue();
        assertThat(a.isStrictlyInlineable(pad)).isFalse();
        assertThat(a.needsMultiLevelTiling(pad)).isFalse();
        assertThat(a.isSimpleAccess(conv)).isFalse();
        assertThat(a.needsMultiLevelTiling(conv)).isTrue();
        assertThat(a.isSimpleAccess(relu)).isTrue();
        assertThat(a.isStrictlyInlineable(relu)).isTrue();
        assertThat(a.isOutput(relu)).isTrue();
        assertThat(a.isOutput(conv)).isFalse();
        assertThat(a.elementwiseMatch(conv, relu)).isTrue();
        assertThat(a.elementwiseMatch(pad, conv)).isFalse();
        // pad [1, 8, 8, 4] and conv [1, 6, 6, 6] share the batch dimension only
        assertThat(a.numCommonOuterIterators(conv, pad)).isEqualTo(1);
        assertThat(a.numCommonOuterIterators(pad, conv)).isEqualTo(1);
        assertThat(a.numCommonOuterIterators(relu, conv)).isEqualTo(4);
        assertThat(a.numCommonOuterIteratorsPath(pad, relu)).isEqualTo(1);
        assertThat(a.numCommonOuterIteratorsPath(conv, relu)).isEqualTo(4);
        assertThat(a.numCommonOuterIteratorsPath(relu, pad)).isZero();
    }

    @Test
    void softmaxExpIsNotStrictlyInlineableAndHasTwoReaders() {
        ComputeDAG dag = Workloads.softmaxNm(3, 20);
        AccessAnalyzer a = AccessAnalyzer.of(dag);
        Operation max = op(dag, "softmax_max"),
                exp = op(dag, "softmax_exp"),
                sum = op(dag, "softmax_sum"),
                norm = op(dag, "softmax");
        assertThat(a.needsMultiLevelTiling(max)).isFalse();
        assertThat(a.isSimpleAccess(max)).isFalse();
        assertThat(a.access(exp).hasExp()).isTrue();
        assertThat(a.isSimpleAccess(exp)).isTrue();
        assertThat(a.isStrictlyInlineable(exp)).isFalse();
        assertThat(a.needsMultiLevelTiling(exp)).isFalse();
        assertThat(a.readBy(exp).keySet()).containsExactly(sum, norm);
        assertThat(a.elementwiseMatch(exp, norm)).isFalse();
        assertThat(a.elementwiseMatch(sum, norm)).isFalse();
        assertThat(a.isStrictlyInlineable(norm)).isTrue();
    }

    @Test
    void normsLayerNormOutputHasReuseByAnsorsCountBatchNormToo() {
        ComputeDAG ln = Workloads.layerNorm(4, 10);
        AccessAnalyzer a = AccessAnalyzer.of(ln);
        assertThat(a.needsMultiLevelTiling(op(ln, "layer_norm_mean"))).isFalse();
        assertThat(a.needsMultiLevelTiling(op(ln, "layer_norm_var"))).isFalse();
        // x, mean, var, gamma, beta: four producers are read without some axis
        assertThat(a.needsMultiLevelTiling(op(ln, "layer_norm"))).isTrue();
        assertThat(a.isStrictlyInlineable(op(ln, "layer_norm"))).isTrue();

        Tensor x = Te.placeholder("x", FLOAT32, 1, 3, 4, 4);
        Tensor v = Te.placeholder("v", FLOAT32, 3);
        ComputeDAG bn = ComputeDAG.of(Norm.batchNormNchw(
                x,
                Te.placeholder("mean", FLOAT32, 3),
                v,
                Te.placeholder("gamma", FLOAT32, 3),
                Te.placeholder("beta", FLOAT32, 3),
                1e-5));
        assertThat(AccessAnalyzer.of(bn).needsMultiLevelTiling(op(bn, "batch_norm")))
                .isTrue();
        // a single broadcast producer and no reduction: no reuse
        Tensor b = Te.compute(
                "bias_add", x.shape(), (n, c, h, w) -> x.at(n, c, h, w).add(v.at(c)));
        assertThat(AccessAnalyzer.of(ComputeDAG.of(b)).needsMultiLevelTiling(b.op()))
                .isFalse();
        assertThat(AccessAnalyzer.of(ComputeDAG.of(b)).isStrictlyInlineable(b.op()))
                .isTrue();
    }

    @Test
    void poolingHasNoReuse() {
        ComputeDAG dag = Workloads.maxPool2d(1, 8, 8, 4, 1);
        AccessAnalyzer a = AccessAnalyzer.of(dag);
        Operation pool = dag.outputs().get(0).op();
        assertThat(a.needsMultiLevelTiling(pool)).isFalse();
        assertThat(a.isSimpleAccess(pool)).isFalse();
        assertThat(a.isStrictlyInlineable(op(dag, "pad"))).isFalse();
    }

    @Test
    void transposesShiftsConstantsAndBroadcasts() {
        Tensor x = Te.placeholder("x", FLOAT32, 4, 5);
        Tensor t = Te.compute("t", Te.shape(5, 4), (i, j) -> x.at(j, i));
        Tensor s = Te.compute("s", Te.shape(3, 5), (i, j) -> x.at(i.add(1), j));
        Tensor c = Te.compute("c", Te.shape(4), i -> x.at(i, Te.i32(2)));
        Tensor d = Te.compute("d", Te.shape(4, 4), (i, j) -> x.at(i, i));
        Tensor e = Te.compute("e", Te.shape(4, 5), (i, j) -> Te.exp(x.at(i, j)));
        for (Tensor out : List.of(t, s, c, d, e)) {
            AccessAnalyzer a = AccessAnalyzer.of(ComputeDAG.of(out));
            assertThat(a.isSimpleAccess(out.op())).as(out.name()).isTrue();
        }
        assertThat(OpAccess.of(t.op()).strictlyInlineable()).as("transpose").isFalse();
        assertThat(OpAccess.of(s.op()).strictlyInlineable()).as("shift").isTrue();
        assertThat(OpAccess.of(c.op()).strictlyInlineable())
                .as("constant index")
                .isTrue();
        assertThat(OpAccess.of(d.op()).strictlyInlineable())
                .as("duplicate axis")
                .isFalse();
        assertThat(OpAccess.of(e.op()).strictlyInlineable()).as("exp").isFalse();
        IterVar i = ((dev.kiln.te.ComputeOp) s.op()).axes().get(0);
        List<Expr> idx =
                List.of(i.add(1), ((dev.kiln.te.ComputeOp) s.op()).axes().get(1));
        assertThat(IndexAccess.of(s.op(), idx).isElementwise()).isTrue();
        assertThat(IndexAccess.of(s.op(), List.of(i.mul(2))).simple()).isFalse();
        // a constant tensor reads nothing and is always strictly inlineable
        Tensor k = Te.compute("k", Te.shape(3), j -> Te.f32(1));
        assertThat(OpAccess.of(k.op()).strictlyInlineable()).isTrue();
    }

    @Test
    void aResidualAddThatIndexesTheUnitBatchWithZeroStillMatchesElementwise() {
        // conv -> add(conv, residual) -> scale, where the add reads its operands as a broadcasting op does:
        // index 0 for the batch axis of extent 1 (the ONNX import's and the graph's binary ops); the conv's
        // consumer chain must stay element-wise so the conv can be fused into the output's tiles
        ComputeDAG convDag = Workloads.conv2dNhwcRelu(1, 6, 6, 4, 6, 3);
        Tensor conv = convDag.ops().stream()
                .filter(o -> o.name().equals("conv2d_nhwc"))
                .findFirst()
                .orElseThrow()
                .output(0);
        Tensor residual = Te.placeholder("residual", FLOAT32, 1, 6, 6, 6);
        Tensor add = Te.compute("add", Te.shape(1, 6, 6, 6), (n, h, w, c) -> conv.at(Te.i32(0), h, w, c)
                .add(residual.at(Te.i32(0), h, w, c)));
        Tensor out = Te.compute("scale", Te.shape(1, 6, 6, 6), (n, h, w, c) -> add.at(n, h, w, c)
                .mul(Te.f32(2)));
        ComputeDAG dag = ComputeDAG.of(out);
        AccessAnalyzer a = AccessAnalyzer.of(dag);
        assertThat(a.elementwiseMatch(conv.op(), out.op())).isTrue();
        assertThat(a.elementwiseMatch(add.op(), out.op())).isTrue();
        // a constant index on an axis of extent above 1 is still a missing axis (a broadcast), not element-wise
        Tensor x = Te.placeholder("x", FLOAT32, 2, 6);
        Tensor row = Te.compute("row", Te.shape(2, 6), (i, j) -> x.at(Te.i32(0), j));
        IterVar i0 = ((dev.kiln.te.ComputeOp) row.op()).axes().get(0);
        IterVar j0 = ((dev.kiln.te.ComputeOp) row.op()).axes().get(1);
        assertThat(IndexAccess.of(row.op(), List.of(Te.i32(0), j0)).isElementwise())
                .isFalse();
        assertThat(IndexAccess.of(row.op(), List.of(i0, j0)).isElementwise()).isTrue();
    }
}
