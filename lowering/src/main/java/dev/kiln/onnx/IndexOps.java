package dev.kiln.onnx;

import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;
import java.util.Set;

/**
 * Range (folded: its operands must be constants), Expand and Where: folded on constants, else
 * {@code broadcast_to} and {@code where} nodes.
 */
final class IndexOps {
    private IndexOps() {}

    static void range(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Const start = ctx.constant(n, 0, "start"),
                limit = ctx.constant(n, 1, "limit"),
                delta = ctx.constant(n, 2, "delta");
        double s = start.scalar("start"), l = limit.scalar("limit"), d = delta.scalar("delta");
        if (d == 0) throw new KilnException("delta is 0");
        long count = (long) Math.max(Math.ceil((l - s) / d), 0);
        if (count == 0)
            throw new KilnException(
                    "the range [" + s + ", " + l + ") in steps of " + d + " is empty; Kiln has no empty tensors");
        if (count > Integer.MAX_VALUE) throw new KilnException("the range holds " + count + " elements, too many");
        if (start.isFloat()) { // ONNX: start + i * delta, in the input type
            float[] v = new float[(int) count];
            for (int i = 0; i < v.length; i++) v[i] = (float) start.get(0) + i * (float) delta.get(0);
            ctx.fold(n.getOutput(0), Const.ofFloats(v, count));
        } else {
            long[] v = new long[(int) count];
            for (int i = 0; i < v.length; i++) v[i] = start.getLong(0) + i * delta.getLong(0);
            ctx.fold(n.getOutput(0), Const.ofInts(start.dtype(), v, count));
        }
    }

    static void expand(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref x = ctx.required(n, 0);
        long[] shape = ctx.constant(n, 1, "shape").toLongs("shape");
        long[] out = ConstEval.broadcastShape(x.shape(), shape, "Expand");
        if (x instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), ConstEval.broadcastTo(c.c(), out, "input"));
        } else if (Arrays.equals(out, x.shape())) {
            ctx.define(n.getOutput(0), x);
        } else {
            ctx.emit(n.getOutput(0), new Op.BroadcastTo(ShapeOps.boxed(out)), null, ctx.plain(x));
        }
    }

    static void where(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref c = ctx.required(n, 0), x = ctx.required(n, 1), y = ctx.required(n, 2);
        DType ct =
                c instanceof ConstRef k ? k.c().dtype() : ((ValueRef) c).value().dtype();
        if (ct != DType.BOOL) throw new KilnException("input 0 (condition) must be bool, got " + ct);
        if (c instanceof ConstRef cc && x instanceof ConstRef cx && y instanceof ConstRef cy) {
            long[] out = ConstEval.broadcastShape(
                    ConstEval.broadcastShape(cc.shape(), cx.shape(), "Where"), cy.shape(), "Where");
            Const b = ConstEval.broadcastTo(cc.c(), out, "condition"),
                    p = ConstEval.broadcastTo(cx.c(), out, "X"),
                    q = ConstEval.broadcastTo(cy.c(), out, "Y");
            int size = (int) Const.count(out);
            if (p.isFloat() != q.isFloat()) throw new KilnException("X and Y differ in type");
            float[] f = p.isFloat() ? new float[size] : null;
            long[] l = p.isFloat() ? null : new long[size];
            for (int i = 0; i < size; i++) {
                boolean t = b.getLong(i) != 0;
                if (f != null) f[i] = (float) (t ? p.get(i) : q.get(i));
                else l[i] = t ? p.getLong(i) : q.getLong(i);
            }
            ctx.fold(n.getOutput(0), f != null ? Const.ofFloats(f, out) : Const.ofInts(p.dtype(), l, out));
            return;
        }
        int rank = Math.max(c.rank(), Math.max(x.rank(), y.rank()));
        Value cv = ctx.plain(MathOps.toRank(ctx, c, rank)),
                xv = ctx.plain(MathOps.toRank(ctx, x, rank)),
                yv = ctx.plain(MathOps.toRank(ctx, y, rank));
        ctx.emit(n.getOutput(0), new Op.Where(), null, cv, xv, yv);
    }
}
