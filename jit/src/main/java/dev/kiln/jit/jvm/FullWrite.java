package dev.kiln.jit.jvm;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Whether an allocation's first statement writes every element of it before anything can read it, so
 * that the generator need not clear it on entry (allocations are zero on entry otherwise, as in the
 * interpreter). The first statement must be a perfect nest of serial, vectorized or unrolled loops
 * from 0 with constant extents around one store into the allocation whose value does not read it,
 * and the store's element offset must be a bijection of the iteration space onto the whole
 * allocation: affine in the loop variables with no constant term, the coefficients, in increasing
 * order, 1, then each the previous one times its loop's extent, the last times its extent the
 * allocation's size. A packing stage ({@code B.local[ax0 * 256 + ax1] = B[..]}) is such a nest.
 * Off (always clear) when the system property {@code kiln.jvm.zeroAlways} is {@code true}.
 */
final class FullWrite {
    private FullWrite() {}

    static boolean writesAllFirst(Allocate a, long elements) {
        if (Boolean.getBoolean("kiln.jvm.zeroAlways")) return false;
        Stmt s = a.body();
        while (s instanceof Seq q && !q.stmts().isEmpty()) s = q.stmts().get(0);
        List<For> loops = new ArrayList<>();
        while (s instanceof For f) {
            if (!(f.min() instanceof IntImm m && m.value() == 0)
                    || !(f.extent() instanceof IntImm e && e.value() > 0)
                    || f.kind() == ForKind.PARALLEL
                    || f.kind() == ForKind.THREAD_BOUND) {
                return false;
            }
            loops.add(f);
            s = f.body();
        }
        if (!(s instanceof Store st)
                || st.buffer().base() != a.buffer().base()
                || st.buffer().dtype() != a.buffer().dtype()) {
            return false;
        }
        boolean[] readsItself = {false};
        Exprs.forEach(st.value(), x -> {
            if (x instanceof BufferLoad l && l.buffer().base() == a.buffer().base()) readsItself[0] = true;
        });
        if (readsItself[0]) return false;
        long[] strides;
        try {
            strides = st.buffer().constStrides();
        } catch (KilnException e) {
            return false;
        }
        Map<Var, Long> coefficients = new IdentityHashMap<>();
        for (For f : loops) coefficients.put(f.var(), 0L);
        long[] constant = {0};
        for (int d = 0; d < strides.length; d++) {
            if (!affine(st.indices().get(d), strides[d], coefficients, constant)) return false;
        }
        if (constant[0] != 0) return false;
        List<For> byCoefficient = new ArrayList<>(loops);
        byCoefficient.sort((x, y) -> Long.compare(coefficients.get(x.var()), coefficients.get(y.var())));
        long expected = 1;
        for (For f : byCoefficient) {
            if (coefficients.get(f.var()) != expected) return false;
            expected = Work.mul(expected, ((IntImm) f.extent()).value());
        }
        return expected == elements;
    }

    /** Adds {@code scale * e} to the coefficients of the loop variables and the constant; false if not affine. */
    private static boolean affine(Expr e, long scale, Map<Var, Long> coefficients, long[] constant) {
        return switch (e) {
            case IntImm c -> {
                constant[0] += scale * c.value();
                yield true;
            }
            case Var v -> {
                Long c = coefficients.get(v);
                if (c == null) yield false;
                coefficients.put(v, c + scale);
                yield true;
            }
            case Cast c
            when c.dtype().isInt()
                    && c.value().dtype().isInt()
                    && c.dtype().bits() >= c.value().dtype().bits() -> affine(c.value(), scale, coefficients, constant);
            case Binary b ->
                switch (b.op()) {
                    case ADD ->
                        affine(b.a(), scale, coefficients, constant) && affine(b.b(), scale, coefficients, constant);
                    case SUB ->
                        affine(b.a(), scale, coefficients, constant) && affine(b.b(), -scale, coefficients, constant);
                    case MUL ->
                        b.b() instanceof IntImm k
                                ? affine(b.a(), scale * k.value(), coefficients, constant)
                                : b.a() instanceof IntImm k2
                                        && affine(b.b(), scale * k2.value(), coefficients, constant);
                    default -> false;
                };
            default -> false;
        };
    }
}
