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
 *   <li>index arithmetic (inside a tensor's indices), conditions (of a select or a reduction),
 *       comparisons, logic, casts and plain copies count 0.</li>
 * </ul>
 */
public final class FlopCounter {
    private FlopCounter() {}

    public static long count(List<Operation> ops) {
        long total = 0;
        for (Operation op : ops) {
            if (op instanceof ComputeOp c) total = Math.addExact(total, count(c));
        }
        return total;
    }

    /** FLOPs of one operation. */
    public static long count(ComputeOp c) {
        long points = 1;
        for (IterVar a : c.axes()) points = Math.multiplyExact(points, a.extent());
        if (c.body() instanceof Reduce r) {
            long reducePoints = 1;
            for (IterVar a : r.axes()) reducePoints = Math.multiplyExact(reducePoints, a.extent());
            long perPoint = 0;
            for (Expr s : r.sources()) perPoint += ops(s);
            for (Expr e : r.reducer().results()) perPoint += ops(e);
            return Math.multiplyExact(Math.multiplyExact(points, reducePoints), perPoint);
        }
        long perPoint = 0;
        for (Expr b : c.bodies()) perPoint += ops(b);
        return Math.multiplyExact(points, perPoint);
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
            case Call c -> (c.fn() == Intrinsic.FMA ? 2 : 1) + c.args().stream().mapToLong(FlopCounter::ops).sum();
            case TensorRead r -> 0;
            case BufferLoad l -> 0;
            case Reduce r -> 0;
        };
    }
}
