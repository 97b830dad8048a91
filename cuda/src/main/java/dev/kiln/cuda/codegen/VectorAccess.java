package dev.kiln.cuda.codegen;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.Store;
import java.util.function.Consumer;

/**
 * Vector copies for vectorized loops: a loop {@code for v in 0..L} (L = 2 or 4) whose body is
 * {@code dst[a + v] = src[b + v]} on float32 flat buffers, where {@code a} and {@code b} are
 * provably multiples of L, becomes one {@code float2}/{@code float4} load and store. That is the
 * shape of a vectorized cooperative fetch into shared memory. Alignment holds because every base
 * pointer is aligned to 16 bytes: device allocations (256), {@code __shared__ __align__(16)}
 * arrays. Anything else is left to the scalar path.
 */
final class VectorAccess {
    private VectorAccess() {}

    /** Emits the vector copy and returns true, or returns false and emits nothing. */
    static boolean tryEmit(For f, ExprGen g, CudaNames names, Consumer<String> line) {
        if (!(f.min() instanceof IntImm m) || m.value() != 0 || !(f.extent() instanceof IntImm e)) return false;
        long lanes = e.value();
        if (lanes != 2 && lanes != 4) return false;
        if (!(f.body() instanceof Store st) || !(st.value() instanceof BufferLoad ld)) return false;
        if (st.buffer().dtype() != DType.FLOAT32 || ld.buffer().dtype() != DType.FLOAT32) return false;
        if (st.buffer().scope() == MemoryScope.LOCAL || ld.buffer().scope() == MemoryScope.LOCAL) return false;
        Expr dst = base(st.buffer(), st.indices(), f.var(), lanes);
        Expr src = base(ld.buffer(), ld.indices(), f.var(), lanes);
        if (dst == null || src == null) return false;
        String vt = lanes == 4 ? "float4" : "float2";
        line.accept("*(" + vt + "*)(" + names.buffer(st.buffer()) + " + " + index(g, dst) + ") = *(const " + vt + "*)("
                + names.buffer(ld.buffer()) + " + " + index(g, src) + ");");
        return true;
    }

    private static String index(ExprGen g, Expr e) {
        return e == null ? "0" : g.index(e);
    }

    /**
     * For a flat access {@code base + v} (or {@code v}) with {@code base} a multiple of
     * {@code lanes} not using {@code v}: {@code base} (an int 0 for {@code v} alone); else null.
     */
    private static Expr base(Buffer b, java.util.List<Expr> indices, Var v, long lanes) {
        if (indices.size() != 1 || !(b.strides().getFirst() instanceof IntImm s) || s.value() != 1) return null;
        Expr i = indices.getFirst();
        if (i == v) return IntImm.i32(0);
        if (!(i instanceof Binary add) || add.op() != BinaryOp.ADD) return null;
        Expr rest = add.b() == v ? add.a() : add.a() == v ? add.b() : null;
        if (rest == null || Exprs.uses(rest, v) || !multipleOf(rest, lanes)) return null;
        return rest;
    }

    /** Whether {@code e} is provably a multiple of {@code k} (by its structure). */
    static boolean multipleOf(Expr e, long k) {
        return switch (e) {
            case IntImm c -> c.value() % k == 0;
            case Binary b
            when b.op() == BinaryOp.ADD || b.op() == BinaryOp.SUB -> multipleOf(b.a(), k) && multipleOf(b.b(), k);
            case Binary b when b.op() == BinaryOp.MUL -> multipleOf(b.a(), k) || multipleOf(b.b(), k);
            default -> false;
        };
    }
}
