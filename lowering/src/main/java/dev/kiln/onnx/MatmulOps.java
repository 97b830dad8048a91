package dev.kiln.onnx;

import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;
import java.util.Set;

/**
 * Gemm and MatMul. A constant right operand becomes a dense layer (weight transposed to [N, K] at
 * import, alpha folded into it); two computed operands become a batched matmul over the
 * (broadcast) leading axes.
 */
final class MatmulOps {
    private MatmulOps() {}

    static void gemm(ImportContext ctx, NodeProto n) {
        Attrs at = new Attrs(n, Set.of("alpha", "beta", "transA", "transB"));
        Ref a = ctx.required(n, 0), b = ctx.required(n, 1), c = ctx.input(n, 2);
        if (a.rank() != 2 || b.rank() != 2)
            throw new KilnException("A and B must be matrices, got " + Arrays.toString(a.shape()) + " and "
                    + Arrays.toString(b.shape()));
        double alpha = at.getFloat("alpha", 1), beta = at.getFloat("beta", 1);
        boolean transA = at.getInt("transA", 0) != 0, transB = at.getInt("transB", 0) != 0;
        Value av = ctx.plain(a);
        if (transA) av = ctx.g.node(ctx.fresh(av.name() + "/T"), new Op.Transpose(java.util.List.of(1, 0)), av);
        long m = av.shape().get(0), k = av.shape().get(1);
        long nOut = transB ? b.shape()[0] : b.shape()[1];
        if ((transB ? b.shape()[1] : b.shape()[0]) != k) {
            throw new KilnException("A is " + m + "x" + k + " (after transA) but B is " + Arrays.toString(b.shape())
                    + (transB ? " (transposed)" : ""));
        }
        String out = n.getOutput(0);
        String mm = c == null || beta == 0 ? out : out + "/matmul";
        Value y;
        if (b instanceof ConstRef cb) {
            Const w = transB ? cb.c() : cb.c().transpose(1, 0);
            if (alpha != 1) w = ConstEval.binary("Mul", w, Const.ofFloats(new float[] {(float) alpha}, 1));
            y = ctx.emit(mm, new Op.Dense(), null, av, ctx.plain(new ConstRef(w)))
                    .value();
        } else {
            Value a3 = ctx.asShape(new Ref.ValueRef(av, av.dims(), null), 1, m, k);
            Value b3 = ctx.asShape(b, 1, b.shape()[0], b.shape()[1]);
            Value y3 = ctx.g.node(ctx.fresh(mm + "/bmm"), new Op.BatchMatmul(false, transB), a3, b3);
            if (alpha != 1) {
                y3 = ctx.g.node(
                        ctx.fresh(mm + "/alpha"),
                        new Op.Binary(Op.BinaryKind.MULTIPLY),
                        y3,
                        ctx.plain(new ConstRef(Const.ofFloats(new float[] {(float) alpha}, 1))));
            }
            y = ctx.emit(mm, new Op.Reshape(java.util.List.of(m, nOut)), null, y3)
                    .value();
        }
        if (c == null || beta == 0) return;
        Ref cs = c;
        if (beta != 1) {
            if (!(c instanceof ConstRef cc)) throw new KilnException("beta != 1 needs a constant C");
            cs = new ConstRef(ConstEval.binary("Mul", cc.c(), Const.ofFloats(new float[] {(float) beta}, 1)));
        }
        if (cs instanceof ConstRef cc
                && cc.c().size() == nOut
                && (cs.rank() == 1 || cs.rank() == 2 && cs.shape()[0] == 1)) {
            ctx.emit(
                    out,
                    new Op.BiasAdd(1),
                    null,
                    y,
                    ctx.plain(new ConstRef(cc.c().reshape(nOut))));
        } else {
            ctx.emit(out, new Op.Binary(Op.BinaryKind.ADD), null, y, ctx.plain(cs));
        }
    }

    static void matmul(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref a = ctx.required(n, 0), b = ctx.required(n, 1);
        if (a.rank() < 2 || b.rank() < 2) {
            throw new KilnException("matrix-vector products (rank-1 operands) are not supported; got "
                    + Arrays.toString(a.shape()) + " x " + Arrays.toString(b.shape()));
        }
        long[] as = a.shape(), bs = b.shape();
        long m = as[as.length - 2], k = as[as.length - 1], nOut = bs[bs.length - 1];
        if (bs[bs.length - 2] != k)
            throw new KilnException("inner extents differ: " + Arrays.toString(as) + " x " + Arrays.toString(bs));
        long[] batchA = Arrays.copyOf(as, as.length - 2), batchB = Arrays.copyOf(bs, bs.length - 2);
        long[] batch = ConstEval.broadcastShape(batchA, batchB, "MatMul batch axes");
        long[] outShape = Arrays.copyOf(batch, batch.length + 2);
        outShape[batch.length] = m;
        outShape[batch.length + 1] = nOut;
        long rowsA = Const.count(batchA) * m;
        String out = n.getOutput(0);
        boolean bShared = Const.count(batchB) == 1; // one right matrix for every batch entry
        if (bShared && Arrays.equals(batchA, batch)) { // all rows of A times one matrix: [rows, K] x [K, N]
            if (b instanceof ConstRef cb) {
                Value w = ctx.plain(new ConstRef(
                        cb.c().reshape(k, nOut).transpose(1, 0), cb.name() == null ? null : cb.name() + "/T"));
                ctx.emitView(out, new Op.Dense(), outShape, ctx.asShape(a, rowsA, k), w);
            } else {
                ctx.emitView(
                        out,
                        new Op.BatchMatmul(false, false),
                        outShape,
                        ctx.asShape(a, 1, rowsA, k),
                        ctx.asShape(b, 1, k, nOut));
            }
            return;
        }
        if (!Arrays.equals(batchA, batch) || !Arrays.equals(batchB, batch)) {
            throw new KilnException("batch axes that broadcast on both sides are not supported: " + Arrays.toString(as)
                    + " x " + Arrays.toString(bs));
        }
        long bn = Const.count(batch);
        ctx.emitView(
                out, new Op.BatchMatmul(false, false), outShape, ctx.asShape(a, bn, m, k), ctx.asShape(b, bn, k, nOut));
    }
}
