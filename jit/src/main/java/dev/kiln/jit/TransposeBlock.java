package dev.kiln.jit;

import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.IntImm;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * A transposing copy of W x W blocks, done in vector registers. The nest
 *
 * <pre>
 *   for a in [a0, a0 + E):              serial or unrolled, E a multiple of W, or a power of two from 4 below it
 *     vectorized for b in [b0, b0 + L):  L a multiple of W, W = one vector register's lanes or L if fewer
 *       dst[...] = src[...]             contiguous in b for dst, in a for src, strided in b for src
 * </pre>
 *
 * (W from 4 to 16) is what a blocked transposition ({@code InitReadOrder}'s cache-line blocks, a copy such as the
 * attention workload's {@code value_T[h, d, l] = value[l, h, d]}) lowers to. Generated loop by loop, each of its
 * vectors is a gather of W elements a row apart (W scalar loads on x86) or, vectorized the other way, a scatter. Here
 * each W x W block loads W contiguous vectors of {@code src} (one per {@code b}, lanes along {@code a}), transposes
 * them with log2(W) rounds of two-vector shuffles (the blocks of each 2 x 2 block matrix swapped across the diagonal,
 * block size W/2 down to 1; LLVM picks {@code vshuff32x4}, {@code vshufps}, {@code vunpcklps} and the like), and
 * stores W contiguous vectors of {@code dst} (one per {@code a}). Every element is read and written once, as in the
 * loop; the two buffers must differ (a copy in place would read what it wrote).
 *
 * <p>Taken only where the offsets prove it under code generation's own lane forms (the load's offset lane-linear with
 * step 1 in {@code a}, the store's in {@code b}); anything else is generated as before.
 */
final class TransposeBlock {
    private TransposeBlock() {}

    /**
     * Emits {@code outer} as transposed vector blocks and returns true, or returns false having emitted at most index
     * arithmetic that nothing uses (the probes of {@link #proves}), after which the caller generates the loop itself.
     */
    static boolean tryGen(CodeGen g, For outer) {
        if (g.lanes != 1 || g.mask != null) return false;
        if (outer.var().dtype().isUnsigned()) return false; // loop variables of index type (i32, i64)
        if (outer.kind() != ForKind.SERIAL && outer.kind() != ForKind.UNROLLED) return false;
        if (!(outer.extent() instanceof IntImm e) || !(outer.body() instanceof For inner)) return false;
        if (inner.kind() != ForKind.VECTORIZED || !(inner.extent() instanceof IntImm w)) return false;
        if (inner.var().dtype().isUnsigned()) return false;
        if (!(inner.body() instanceof Store st) || !(st.value() instanceof BufferLoad ld)) return false;
        DType t = st.buffer().dtype();
        if (ld.buffer().dtype() != t || !plain(t)) return false;
        // blocks of one vector register (16 floats on AVX-512), or the whole inner loop when it is shorter
        long inner0 = w.value();
        int lanes = (int) Math.min(inner0, Math.min(g.options.maxLanes(), 64 / t.bytes()));
        if (lanes < 4 || Long.bitCount(lanes) != 1 || inner0 % lanes != 0 || inner0 / lanes > 8) return false;
        // the outer loop's side of a block: W, or the whole loop when it is shorter (a W x E block, E of W columns)
        int aBlock = (int) Math.min(e.value(), lanes);
        if (aBlock < 4 || Long.bitCount(aBlock) != 1 || e.value() % aBlock != 0 || e.value() / aBlock > 16)
            return false;
        if (ld.buffer().base() == st.buffer().base()) return false;

        Val aMin = ExprGen.gen(g, outer.min()), bMin = ExprGen.gen(g, inner.min());
        if (!aMin.isUniform() || !bMin.isUniform()) return false;
        if (!proves(g, outer, inner, st, ld, aMin, bMin, lanes)) return false;

        int savedLanes = g.lanes;
        g.lanes = lanes;
        try {
            for (long q = 0; q < e.value(); q += aBlock)
                for (long j = 0; j < inner0; j += lanes)
                    block(g, outer, inner, st, ld, plus(g, aMin, q), plus(g, bMin, j), aBlock);
        } finally {
            g.lanes = savedLanes;
        }
        return true;
    }

    /**
     * One block: {@code a} in [a0, a0 + E), {@code b} in [b0, b0 + W), W = {@code g.lanes}, E = {@code aBlock} (W or
     * less): W rows of E lanes, widened to W lanes where E is less (the extra lanes never stored), transposed, and
     * the first E columns stored.
     */
    private static void block(CodeGen g, For outer, For inner, Store st, BufferLoad ld, Val a0, Val b0, int aBlock) {
        int lanes = g.lanes;
        DType t = st.buffer().dtype();
        String vty = IrTypes.vec(IrTypes.reg(t), lanes), rowTy = IrTypes.vec(IrTypes.reg(t), aBlock);
        List<String> rows = new ArrayList<>(lanes);
        for (int r = 0; r < lanes; r++) {
            Val[] row = new Val[1];
            Val b = plus(g, b0, r);
            g.lanes = aBlock;
            try {
                StmtGen.bind(
                        g,
                        outer.var(),
                        Val.linear(a0.ref(), 1, a0.dtype()),
                        () -> StmtGen.bind(g, inner.var(), b, () -> row[0] = ExprGen.gen(g, ld)));
                String v = g.vector(row[0]);
                rows.add(aBlock == lanes ? v : widen(g, v, rowTy, aBlock, lanes));
            } finally {
                g.lanes = lanes;
            }
        }
        List<String> cols = transpose(g, rows, vty);
        for (int c = 0; c < aBlock; c++) {
            Val a = plus(g, a0, c);
            Val col = Val.varying(cols.get(c), t);
            StmtGen.bind(
                    g,
                    outer.var(),
                    a,
                    () -> StmtGen.bind(
                            g,
                            inner.var(),
                            Val.linear(b0.ref(), 1, b0.dtype()),
                            () -> Memory.store(g, st.buffer(), ExprGen.indices(g, st.indices()), col)));
        }
    }

    /** {@code v} of {@code n} lanes as a vector of {@code w} lanes, the lanes past {@code n} poison. */
    private static String widen(CodeGen g, String v, String ty, int n, int w) {
        StringBuilder mask = new StringBuilder();
        for (int p = 0; p < w; p++) mask.append(p == 0 ? "" : ", ").append(p < n ? "i32 " + p : "i32 poison");
        return g.fn.emit("shufflevector " + ty + " " + v + ", " + ty + " poison, <" + w + " x i32> <" + mask + ">");
    }

    /** Types whose register and memory forms are the same (no conversion around a load or store). */
    private static boolean plain(DType t) {
        return t == DType.FLOAT32 || t == DType.FLOAT64 || t == DType.INT32 || t == DType.INT64;
    }

    /**
     * Whether, over {@code lanes} lanes, the store's offset is contiguous in {@code b} with {@code a} fixed, the
     * load's contiguous in {@code a} with {@code b} fixed and not in {@code b}. The probes emit index arithmetic that
     * nothing uses (LLVM drops it).
     */
    private static boolean proves(
            CodeGen g, For outer, For inner, Store st, BufferLoad ld, Val aMin, Val bMin, int lanes) {
        int savedLanes = g.lanes;
        g.lanes = lanes;
        boolean[] ok = {false};
        try {
            Val bLinear = Val.linear(bMin.ref(), 1, bMin.dtype());
            Val aLinear = Val.linear(aMin.ref(), 1, aMin.dtype());
            StmtGen.bind(
                    g,
                    outer.var(),
                    aMin,
                    () -> StmtGen.bind(g, inner.var(), bLinear, () -> {
                        Val so = Memory.offset(g, st.buffer(), ExprGen.indices(g, st.indices()));
                        Val lo = Memory.offset(g, ld.buffer(), ExprGen.indices(g, ld.indices()));
                        ok[0] = unit(so) && lo.form() == Val.Form.LINEAR && lo.step() != 1;
                    }));
            if (!ok[0]) return false;
            StmtGen.bind(
                    g,
                    outer.var(),
                    aLinear,
                    () -> StmtGen.bind(g, inner.var(), bMin, () -> {
                        Val lo = Memory.offset(g, ld.buffer(), ExprGen.indices(g, ld.indices()));
                        ok[0] = unit(lo);
                    }));
            return ok[0];
        } finally {
            g.lanes = savedLanes;
        }
    }

    private static boolean unit(Val offset) {
        return offset.form() == Val.Form.LINEAR && offset.step() == 1;
    }

    /** {@code v + k} for a uniform integer {@code v}. */
    private static Val plus(CodeGen g, Val v, long k) {
        DType t = v.dtype();
        if (k == 0) return v;
        if (v.isLiteral()) return Val.uniform(IrTypes.intConst(t, Long.parseLong(v.ref()) + k), t);
        return Val.uniform(g.fn.emit("add nsw " + IrTypes.reg(t) + " " + v.ref() + ", " + IrTypes.intConst(t, k)), t);
    }

    /**
     * The columns of the square matrix whose rows are {@code rows}: for d = W/2, W/4, ..., 1, rows i and i + d (bit d
     * of i clear) exchange their off-diagonal d x d blocks, {@code x[i][p + d]} with {@code x[i + d][p]} for p with
     * bit d clear; after the round with d = 1 row i holds what was column i.
     */
    private static List<String> transpose(CodeGen g, List<String> rows, String vty) {
        int n = rows.size();
        List<String> x = new ArrayList<>(rows);
        for (int d = n / 2; d >= 1; d /= 2) {
            List<String> next = new ArrayList<>(x);
            for (int i = 0; i < n; i++) {
                if ((i & d) != 0) continue;
                StringBuilder lo = new StringBuilder(), hi = new StringBuilder();
                for (int p = 0; p < n; p++) {
                    boolean low = (p & d) == 0;
                    // row i keeps its own p where bit d is clear and takes row i + d's p - d elsewhere;
                    // row i + d takes row i's p + d where bit d is clear and keeps its own p elsewhere
                    int fromLo = low ? p : n + p - d;
                    int fromHi = low ? p + d : n + p;
                    lo.append(p == 0 ? "" : ", ").append("i32 ").append(fromLo);
                    hi.append(p == 0 ? "" : ", ").append("i32 ").append(fromHi);
                }
                String pair = vty + " " + x.get(i) + ", " + vty + " " + x.get(i + d);
                next.set(i, g.fn.emit("shufflevector " + pair + ", <" + n + " x i32> <" + lo + ">"));
                next.set(i + d, g.fn.emit("shufflevector " + pair + ", <" + n + " x i32> <" + hi + ">"));
            }
            x = next;
        }
        return x;
    }
}
