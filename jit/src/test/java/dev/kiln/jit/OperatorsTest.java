package dev.kiln.jit;

import static dev.kiln.te.Te.*;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reducer;
import dev.kiln.lower.LowerDefault;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Operators written with the DSL, lowered by the default lowering and run through the JIT and the
 * interpreter on random inputs (odd sizes throughout): matmul, reductions with conditions,
 * multi-output argmax, softmax, padded strided conv2d, layer norm, and mixed-precision kernels.
 */
class OperatorsTest {
    private static final DType F32 = DType.FLOAT32;

    private static PrimFunc lower(String name, List<Tensor> args) {
        return LowerDefault.lower(name, args);
    }

    @Test
    void matmul() {
        int m = 17, n = 23, k = 19;
        Tensor a = placeholder("A", F32, m, k), b = placeholder("B", F32, k, n);
        IterVar r = reduceAxis(k, "k");
        Tensor c = compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
        JitCheck.exact(lower("matmul", List.of(a, b, c)), 1);
    }

    @Test
    void reductionsOverTwoAxesWithAConditionAndEveryReducer() {
        Tensor a = placeholder("A", F32, 5, 7, 9);
        List<Tensor> outs = new ArrayList<>();
        outs.add(a);
        for (String kind : List.of("sum", "max", "min", "prod")) {
            IterVar j = reduceAxis(7, "j"), k = reduceAxis(9, "k");
            outs.add(compute(kind, shape(5), i -> {
                Expr body = a.at(i, j, k).add(1.0);
                Expr where = j.add(k).floormod(3).ne(1);
                return switch (kind) {
                    case "sum" -> sum(List.of(j, k), body, where);
                    case "max" -> max(List.of(j, k), body, where);
                    case "min" -> min(List.of(j, k), body, where);
                    default -> reduce(Reducer::prod, List.of(j, k), body.mul(0.5), where);
                };
            }));
        }
        JitCheck.exact(lower("reductions", outs), 2);
    }

    @Test
    void multiOutputArgmax() {
        Tensor a = placeholder("A", F32, 6, 13);
        Reducer argmax = Reducer.of(
                "argmax",
                List.of(F32, DType.INT32),
                (acc, x) -> {
                    Expr better = x.get(0).gt(acc.get(0));
                    return List.of(select(better, x.get(0), acc.get(0)), select(better, x.get(1), acc.get(1)));
                },
                List.of(Reducer.lowest(F32), i32(-1)));
        IterVar k = reduceAxis(13, "k");
        List<Tensor> outs = computeMulti(
                "am", shape(6), ax -> argmax.reduce(List.of(a.at(ax.get(0), k), k), List.of(k), bool(true)));
        List<Tensor> args = new ArrayList<>(List.of(a));
        args.addAll(outs);
        JitCheck.exact(LowerDefault.lower("argmax", new ComputeDAG(outs)), 3);
        JitCheck.exact(lower("argmax2", args), 4);
    }

    @Test
    void softmaxWithIntermediates() {
        int n = 7, m = 29;
        Tensor x = placeholder("X", F32, n, m);
        IterVar k1 = reduceAxis(m, "k1"), k2 = reduceAxis(m, "k2");
        Tensor mx = compute("mx", shape(n), i -> max(k1, x.at(i, k1)));
        Tensor e = compute("e", shape(n, m), (i, j) -> exp(x.at(i, j).sub(mx.at(i))));
        Tensor s = compute("s", shape(n), i -> sum(k2, e.at(i, k2)));
        Tensor y = compute("Y", shape(n, m), (i, j) -> e.at(i, j).div(s.at(i)));
        JitCheck.matches(lower("softmax", List.of(x, y)), 5, 1e-6, 1e-7);
    }

    @Test
    void paddedStridedConv2d() {
        int c = 3, h = 11, w = 9, o = 4, kk = 3, pad = 1, stride = 2;
        int oh = (h + 2 * pad - kk) / stride + 1, ow = (w + 2 * pad - kk) / stride + 1;
        Tensor data = placeholder("data", F32, 1, c, h, w), weight = placeholder("weight", F32, o, c, kk, kk);
        Tensor padded = compute(
                "pad",
                shape(1, c, h + 2 * pad, w + 2 * pad),
                (b, ci, y, xx) -> select(
                        all(y.ge(pad), y.lt(h + pad), xx.ge(pad), xx.lt(w + pad)),
                        data.at(b, ci, y.sub(pad), xx.sub(pad)),
                        f32(0)));
        IterVar rc = reduceAxis(c, "rc"), ry = reduceAxis(kk, "ry"), rx = reduceAxis(kk, "rx");
        Tensor out = compute(
                "conv",
                shape(1, o, oh, ow),
                (b, oc, y, xx) -> sum(
                        List.of(rc, ry, rx),
                        padded.at(b, rc, y.mul(stride).add(ry), xx.mul(stride).add(rx))
                                .mul(weight.at(oc, rc, ry, rx))));
        JitCheck.exact(lower("conv2d", List.of(data, weight, out)), 6);
    }

    @Test
    void layerNorm() {
        int n = 5, m = 37;
        Tensor x = placeholder("X", F32, n, m), gamma = placeholder("gamma", F32, m);
        IterVar k1 = reduceAxis(m, "k1"), k2 = reduceAxis(m, "k2");
        Tensor total = compute("total", shape(n), i -> sum(k1, x.at(i, k1)));
        Tensor mean = compute("mean", shape(n), i -> total.at(i).div((double) m));
        Tensor sq = compute(
                "sq",
                shape(n),
                i -> sum(k2, x.at(i, k2).sub(mean.at(i)).mul(x.at(i, k2).sub(mean.at(i)))));
        Tensor y = compute("Y", shape(n, m), (i, j) -> x.at(i, j)
                .sub(mean.at(i))
                .mul(rsqrt(sq.at(i).div((double) m).add(1e-5)))
                .mul(gamma.at(j)));
        JitCheck.exact(lower("layernorm", List.of(x, gamma, y)), 7);
    }

    @Test
    void mixedPrecisionKernels() {
        // int8 dot products accumulated in int32, requantised with a shift
        Tensor a = placeholder("A", DType.INT8, 9, 31), b = placeholder("B", DType.INT8, 31, 5);
        IterVar k = reduceAxis(31, "k");
        Tensor acc = compute(
                "acc",
                shape(9, 5),
                (i, j) -> sum(k, a.at(i, k).cast(DType.INT32).mul(b.at(k, j).cast(DType.INT32))));
        Tensor q = compute(
                "Q",
                shape(9, 5),
                (i, j) -> acc.at(i, j).floordiv(4).max(-128L).min(127L).cast(DType.INT8));
        JitCheck.exact(lower("qmatmul", List.of(a, b, q)), 8);
        // float16 matmul with float32 accumulation, bfloat16 GELU
        Tensor h = placeholder("H", DType.FLOAT16, 6, 21), g = placeholder("G", DType.FLOAT16, 21, 10);
        IterVar r = reduceAxis(21, "r");
        Tensor acc32 = compute(
                "acc32",
                shape(6, 10),
                (i, j) -> sum(r, h.at(i, r).cast(F32).mul(g.at(r, j).cast(F32))));
        Tensor hm = compute("HM", shape(6, 10), (i, j) -> acc32.at(i, j).cast(DType.FLOAT16));
        JitCheck.exact(lower("hmatmul", List.of(h, g, hm)), 9);
        Tensor z = placeholder("Z", DType.BFLOAT16, 40);
        Tensor gelu = compute("gelu", shape(40), i -> z.at(i)
                .mul(0.5)
                .mul(erf(z.at(i).mul(0.7071067811865476)).add(1.0)));
        JitCheck.matches(lower("gelu", List.of(z, gelu)), 10, 0x1p-7, 1e-6);
    }
}
