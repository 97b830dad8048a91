package dev.kiln.autoschedule.feature;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import java.util.Map;

/**
 * Counts the arithmetic of a stored value by kind, in the order of {@link FeatureLayout#OP_NAMES}.
 * A value is float or int by the type of its first operand. {@code a * b + c} (and
 * {@code c + a * b}, {@code a * b - c}) counts as one multiply-add rather than a multiply and an
 * add, and so does the fma intrinsic; min, max and comparisons count as cmp; every intrinsic is a
 * math function (all of Kiln's are pure). The index arithmetic of loads is counted as the
 * compiled program does it after simplification: from each index's linear form (one add per
 * extra term, one multiply per coefficient other than 1, one division per division or remainder).
 */
final class OpCounter {
    static final int F_MAD = 0, F_ADDSUB = 1, F_MUL = 2, F_DIVMOD = 3, F_CMP = 4, F_MATH = 5, F_OTHER = 6;
    static final int I_MAD = 7, I_ADDSUB = 8, I_MUL = 9, I_DIVMOD = 10, I_CMP = 11, I_MATH = 12, I_OTHER = 13;
    static final int BOOL_OP = 14, SELECT_OP = 15;

    private final double[] counts;
    private final Map<Var, Affine> lets;
    private final long[] indexOps = new long[3];

    private OpCounter(double[] counts, Map<Var, Affine> lets) {
        this.counts = counts;
        this.lets = lets;
    }

    /** Adds the counts of {@code value} to {@code counts} (16 entries). */
    static void count(Expr value, Map<Var, Affine> lets, double[] counts) {
        OpCounter c = new OpCounter(counts, lets);
        c.visit(value);
        counts[I_ADDSUB] += c.indexOps[0];
        counts[I_MUL] += c.indexOps[1];
        counts[I_DIVMOD] += c.indexOps[2];
    }

    /** The floating-point operations among 16 counts (what the arithmetic-intensity curve divides). */
    static double floatOps(double[] counts) {
        double s = 0;
        for (int k = F_MAD; k <= F_OTHER; k++) s += counts[k];
        return s;
    }

    private static int base(DType t) {
        return t.isFloat() ? 0 : 7;
    }

    private void visit(Expr e) {
        switch (e) {
            case IntImm i -> {}
            case FloatImm f -> {}
            case Var v -> {}
            case Binary b -> binary(b);
            case Compare c -> {
                counts[base(c.a().dtype()) + F_CMP]++;
                visit(c.a());
                visit(c.b());
            }
            case And a -> {
                counts[BOOL_OP]++;
                visit(a.a());
                visit(a.b());
            }
            case Or o -> {
                counts[BOOL_OP]++;
                visit(o.a());
                visit(o.b());
            }
            case Not n -> {
                counts[BOOL_OP]++;
                visit(n.a());
            }
            case Select s -> {
                counts[SELECT_OP]++;
                visit(s.cond());
                visit(s.t());
                visit(s.f());
            }
            case Cast c -> visit(c.value());
            case Call c -> {
                counts[base(c.dtype()) + (c.fn() == Intrinsic.FMA ? F_MAD : F_MATH)]++;
                for (Expr a : c.args()) visit(a);
            }
            case BufferLoad l -> {
                for (Expr i : l.indices()) {
                    Affine.of(i, lets).countOps(indexOps);
                    visitLoads(i);
                }
            }
            case TensorRead t -> {
                for (Expr i : t.indices()) visit(i);
            }
            case Reduce r -> {
                for (Expr s : r.sources()) visit(s);
            }
        }
    }

    /** Loads nested in an index (indirect access) still count their own arithmetic. */
    private void visitLoads(Expr index) {
        if (index instanceof BufferLoad l) {
            visit(l);
            return;
        }
        for (Expr c : dev.kiln.ir.Exprs.children(index)) visitLoads(c);
    }

    private void binary(Binary b) {
        int base = base(b.a().dtype());
        switch (b.op()) {
            case ADD, SUB -> {
                if (b.a() instanceof Binary m && m.op() == BinaryOp.MUL) {
                    counts[base + F_MAD]++;
                    visit(m.a());
                    visit(m.b());
                    visit(b.b());
                    return;
                }
                if (b.op() == BinaryOp.ADD && b.b() instanceof Binary m && m.op() == BinaryOp.MUL) {
                    counts[base + F_MAD]++;
                    visit(b.a());
                    visit(m.a());
                    visit(m.b());
                    return;
                }
                counts[base + F_ADDSUB]++;
            }
            case MUL -> counts[base + F_MUL]++;
            case DIV, FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> counts[base + F_DIVMOD]++;
            case MIN, MAX -> counts[base + F_CMP]++;
        }
        visit(b.a());
        visit(b.b());
    }
}
