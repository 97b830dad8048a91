package dev.kiln.interp;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.tir.For;

/**
 * Recognises the innermost loop of a reduction nest that {@link DotNodes.DotLoop} runs: constant bounds, and a term
 * that is one load or the product of two from rank-1 buffers whose indices are affine forms (atoms allowed, {@link
 * AffineForm}) in the loop variable, in the accumulator's type: {@code int32(x) * int32(w)} (widening casts that keep
 * every value), float32 products, or float32 products and loads widened to a float64 accumulator.
 */
final class DotLoops {
    private DotLoops() {}

    /** The loop node for {@code g} around term {@code e}, or null when it does not fit (then a plain loop runs). */
    static ExecNode of(
            Compiler c, For g, int slot, Expr e, int acc, MemoryNodes.Accumulator type, ExecNode accumulate) {
        if (!(g.min() instanceof IntImm min) || !(g.extent() instanceof IntImm n)) return null;
        if (n.value() < 1 || n.value() > AffineForm.MAX_DELTAS) return null;
        AffineForm.Range range = new AffineForm.Range(min.value(), n.value());
        Expr x;
        Expr y = null;
        boolean f32Product = false;
        DType want;
        switch (type) {
            case I32, I64 -> {
                want = type == MemoryNodes.Accumulator.I32 ? DType.INT32 : DType.INT64;
                if (e instanceof Binary b && b.op() == BinaryOp.MUL && b.dtype() == want) {
                    x = b.a();
                    y = b.b();
                } else x = e;
            }
            case F64 -> {
                want = DType.FLOAT64;
                Expr t = e;
                if (t instanceof Cast cast && cast.value().dtype() == DType.FLOAT32) {
                    t = cast.value();
                    want = DType.FLOAT32;
                    f32Product = true;
                }
                if (t instanceof Binary b && b.op() == BinaryOp.MUL && b.dtype() == want) {
                    x = b.a();
                    y = b.b();
                } else {
                    x = t;
                    f32Product = false;
                }
            }
            case F32 -> {
                want = DType.FLOAT32;
                if (e instanceof Binary b && b.op() == BinaryOp.MUL && b.dtype() == want) {
                    x = b.a();
                    y = b.b();
                } else x = e;
            }
            default -> {
                return null;
            }
        }
        DotNodes.Operand ox = operand(c, g, slot, range, x, want);
        DotNodes.Operand oy = y == null ? null : operand(c, g, slot, range, y, want);
        if (ox == null || (y != null && oy == null)) return null;
        return new DotNodes.DotLoop(slot, min.value(), (int) n.value(), acc, type, ox, oy, f32Product, accumulate);
    }

    /** {@code e} as an operand of type {@code want}: a rank-1 load, through a widening that keeps every value. */
    private static DotNodes.Operand operand(Compiler c, For g, int slot, AffineForm.Range range, Expr e, DType want) {
        if (e instanceof Cast cast
                && want.isInt()
                && Compiler.keepsEveryValue(cast.value().dtype(), want)) e = cast.value();
        if (!(e instanceof BufferLoad l) || l.indices().size() != 1) return null;
        DType t = l.buffer().dtype();
        boolean ok = want.isInt()
                ? t == DType.INT8 || t == DType.UINT8 || t == DType.INT16 || t == DType.INT32 || t == DType.INT64
                : t == want;
        if (!ok || (want.isInt() && !Compiler.keepsEveryValue(t, want))) return null;
        Expr idx = l.indices().get(0);
        if (idx.dtype().isUnsigned()) return null;
        AffineForm form = AffineForm.of(idx, idx.dtype(), c::slotOf, c::rangeOf);
        if (form == null) return null;
        long[] delta = form.deltas(g.var(), slot, range, c::atomNode);
        if (delta == null) return null;
        long[] shape = c.constShape(l.buffer(), "accessed");
        long[] strides = c.constStrides(l.buffer(), "accessed");
        return new DotNodes.Operand(
                c.bufSlot(l.buffer(), "loaded from"),
                t,
                c.lng(idx),
                delta,
                Compiler.shift(idx.dtype()),
                shape[0],
                strides[0]);
    }
}
