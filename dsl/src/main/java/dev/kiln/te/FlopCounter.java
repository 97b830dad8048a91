package dev.kiln.te;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import java.util.List;

/**
 * Counts the arithmetic of a computation, the way papers count FLOPs:
 * <ul>
 *   <li>every arithmetic operator on values (add, sub, mul, div, min, max, the integer
 *       divisions) and every intrinsic call counts 1, {@code fma} counts 2;</li>
 *   <li>a reduction counts its sources' arithmetic plus its combiner's, once per point of the
 *       spatial and reduce domains, so {@code sum(A[i,k] * B[k,j])} counts 2 per point
 *       (one multiply-add = 2 FLOPs);</li>
 *   <li>a reducer's combiner also counts each distinct comparison it makes, so argmax's
 *       {@code select(x0 >= y0, x0, y0), select(x0 >= y0, x1, y1)} counts 1 per point, like max;</li>
 *   <li>otherwise index arithmetic (inside a tensor's indices), conditions (of a select or a
 *       reduction), comparisons, logic, casts and plain copies count 0.</li>
 * </ul>
 * Integer computations count the same way; their rate is reported in GOP/s
 * ({@link ComputeDAG#rateUnit()}).
 */
final class FlopCounter {
    private FlopCounter() {}

    public static long count(List<Operation> ops) {
        long total = 0;
        for (Operation op : ops) {
            if (op instanceof ComputeOp c) {
                long n = count(c);
                try {
                    total = Math.addExact(total, n);
                } catch (ArithmeticException e) {
                    throw new KilnException("the operation count overflows a long at compute '" + c.name() + "'");
                }
            }
        }
        return total;
    }

    /** FLOPs of one operation; a count past a long throws a KilnException naming the compute. */
    public static long count(ComputeOp c) {
        try {
            return countExact(c);
        } catch (ArithmeticException e) {
            throw new KilnException("compute '" + c.name() + "': its operation count overflows a long (axes "
                    + c.axes().stream().map(a -> a.name() + "=" + a.extent()).toList() + ", reduce axes "
                    + c.reduceAxes().stream()
                            .map(a -> a.name() + "=" + a.extent())
                            .toList() + ")");
        }
    }

    private static long countExact(ComputeOp c) {
        long points = 1;
        for (IterVar a : c.axes()) points = Math.multiplyExact(points, a.extent());
        if (c.body() instanceof Reduce r) {
            long reducePoints = 1;
            for (IterVar a : r.axes()) reducePoints = Math.multiplyExact(reducePoints, a.extent());
            long perPoint = 0;
            for (Expr s : r.sources()) perPoint += ops(s);
            perPoint += combinerOps(r.reducer().results());
            return Math.multiplyExact(Math.multiplyExact(points, reducePoints), perPoint);
        }
        long perPoint = 0;
        for (Expr b : c.bodies()) perPoint += ops(b);
        return Math.multiplyExact(points, perPoint);
    }

    /**
     * Whether any counted operation of the computation works on floating-point values (a float
     * arithmetic operator, intrinsic or reduction). When none does, the computation is integer
     * arithmetic (an int8 matmul accumulating in int32, an integer argmax) and its rate is GOP/s.
     */
    public static boolean hasFloatArithmetic(List<Operation> ops) {
        for (Operation op : ops) {
            if (!(op instanceof ComputeOp c)) continue;
            for (Expr b : c.bodies()) {
                boolean[] found = {false};
                dev.kiln.ir.Exprs.forEach(b, x -> {
                    boolean counted = x instanceof Binary || x instanceof Call || x instanceof Reduce;
                    if (counted && x.dtype().isFloat()) found[0] = true;
                    if (x instanceof Reduce r) {
                        for (Expr e : r.reducer().results()) {
                            dev.kiln.ir.Exprs.forEach(e, y -> {
                                if ((y instanceof Binary || y instanceof Call || y instanceof Compare)
                                        && (y.dtype().isFloat() || operandIsFloat(y))) {
                                    found[0] = true;
                                }
                            });
                        }
                    }
                });
                if (found[0]) return true;
            }
        }
        return false;
    }

    private static boolean operandIsFloat(Expr e) {
        return e instanceof Compare c && c.a().dtype().isFloat();
    }

    /**
     * Operations of one combine of a reducer: the arithmetic of its results plus its distinct
     * comparisons (a comparison shared by several results, as in argmax, counts once).
     */
    public static long combinerOps(List<Expr> results) {
        long n = 0;
        java.util.Set<Expr> compares = new java.util.HashSet<>();
        for (Expr e : results) {
            n += ops(e);
            dev.kiln.ir.Exprs.forEach(e, x -> {
                if (x instanceof Compare c) compares.add(c);
            });
        }
        return n + compares.size();
    }

    /** Arithmetic operations in one evaluation of {@code e} (a select counts its costlier branch). */
    public static long ops(Expr e) {
        return switch (e) {
            case IntImm c -> 0;
            case FloatImm c -> 0;
            case Var v -> 0;
            case Binary b -> 1 + ops(b.a()) + ops(b.b());
            case Compare c -> 0;
            case And a -> 0;
            case Or o -> 0;
            case Not n -> 0;
            case Select s -> Math.max(ops(s.t()), ops(s.f()));
            case Cast c -> ops(c.value());
            case Call c ->
                (c.fn() == Intrinsic.FMA ? 2 : 1)
                        + c.args().stream().mapToLong(FlopCounter::ops).sum();
            case TensorRead r -> 0;
            case BufferLoad l -> 0;
            case Reduce r -> 0;
        };
    }
}
