package dev.kiln.jit.jvm;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Decides whether a vectorized loop's body can run on all lanes at once, and how wide its lanes
 * are. As in TVM, the iterations of a vectorized loop are assumed independent (the schedule's
 * promise). What cannot run on Vector API lanes: a value of a type without a vector species
 * (float16, bfloat16, int8, int16, uint8; bool values are masks) other than one converted at once
 * to a type with lanes (computed lane by lane), a store whose address is the same
 * in every lane (serially, "the last lane wins", or a reduction over the vectorized axis), inner
 * loop bounds that differ between lanes, a buffer allocated per iteration, and a parallel loop inside. Such loops run
 * serially, with a note: never silently.
 */
final class VectorCheck {
    /** Why the loop cannot be vectorized, or null. */
    String reason;
    /** The widest lane type, in bits (32 when only 32-bit or no vector values occur). */
    int maxBits = 32;

    private final Set<Var> varying = Collections.newSetFromMap(new IdentityHashMap<>());

    static boolean vectorType(DType t) {
        return t == DType.FLOAT32 || t == DType.FLOAT64 || t == DType.INT32 || t == DType.INT64;
    }

    static VectorCheck of(For loop) {
        VectorCheck c = new VectorCheck();
        DType vt = loop.var().dtype();
        if (vt != DType.INT32 && vt != DType.INT64) {
            c.reason = "its variable is " + vt + " (int32 or int64 lanes only)";
            return c;
        }
        c.varying.add(loop.var());
        c.stmt(loop.body());
        return c;
    }

    private boolean varies(Expr e) {
        boolean[] hit = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof Var v && varying.contains(v)) hit[0] = true;
        });
        return hit[0];
    }

    private void reject(String why) {
        if (reason == null) reason = why;
    }

    private void stmt(Stmt s) {
        switch (s) {
            case For f -> {
                if (f.kind() == ForKind.PARALLEL || f.kind() == ForKind.THREAD_BOUND) {
                    reject("it contains " + f.kind().displayName() + " loop '"
                            + f.var().name() + "'");
                }
                if (varies(f.min()) || varies(f.extent())) {
                    reject("the bounds of inner loop '" + f.var().name() + "' differ between lanes");
                }
                stmt(f.body());
            }
            case Store st -> {
                if (st.indices().stream().noneMatch(this::varies)) {
                    reject("the store to '" + st.buffer().name() + "' has the same address in every lane "
                            + "(a reduction over the vectorized loop?)");
                }
                if (varies(st.value())) {
                    if (!vectorType(st.buffer().dtype()) && st.buffer().dtype() != DType.BOOL) {
                        reject("it stores " + st.buffer().dtype() + " values, which have no Vector API lanes");
                    }
                    value(st.value());
                } else if (vectorType(st.buffer().dtype())) {
                    bits(st.buffer().dtype());
                }
            }
            case Allocate a -> reject("it allocates buffer '" + a.buffer().name() + "' in every iteration");
            case Seq q -> q.stmts().forEach(this::stmt);
            case IfThenElse i -> {
                if (varies(i.cond())) value(i.cond());
                stmt(i.then());
                if (i.otherwise() != null) stmt(i.otherwise());
            }
            case Let l -> {
                if (varies(l.value())) {
                    value(l.value());
                    varying.add(l.var());
                }
                stmt(l.body());
            }
            case Evaluate e -> {
                if (varies(e.value())) value(e.value());
            }
            case Pragma p -> stmt(p.body());
            case Barrier b -> {}
        }
    }

    private void bits(DType t) {
        if (vectorType(t)) maxBits = Math.max(maxBits, t.bits());
    }

    /** A varying expression that will be computed as a vector (or a mask, for bool). */
    private void value(Expr e) {
        DType t = e.dtype();
        if (!vectorType(t) && t != DType.BOOL) {
            reject("it computes " + t + " values (" + ExprPrinter.print(e) + "), which have no Vector API lanes");
            return;
        }
        bits(t);
        switch (e) {
            case Var v -> {}
            case IntImm c -> {}
            case FloatImm c -> {}
            case Binary b -> operands(b.a(), b.b());
            case Compare c -> {
                if (!vectorType(c.a().dtype())) {
                    reject("it compares " + c.a().dtype() + " values, which have no Vector API lanes");
                }
                operands(c.a(), c.b());
            }
            case And a -> operands(a.a(), a.b());
            case Or o -> operands(o.a(), o.b());
            case Not n -> operands(n.a());
            case Select s -> operands(s.cond(), s.t(), s.f());
            case Cast c -> {
                // from a type without lanes, the whole conversion is computed lane by lane with scalar code
                DType from = c.value().dtype();
                if (vectorType(from) || from == DType.BOOL) operands(c.value());
            }
            case Call c -> operands(c.args().toArray(Expr[]::new));
            case BufferLoad l -> {
                if (!vectorType(l.buffer().dtype()) && l.buffer().dtype() != DType.BOOL) {
                    reject("it loads " + l.buffer().dtype() + " values from '"
                            + l.buffer().name() + "', which have no Vector API lanes");
                }
            }
            case TensorRead r ->
                throw new KilnException(
                        "tensor read " + ExprPrinter.print(r) + " in a loop program: lower the computation first");
            case Reduce r ->
                throw new KilnException(
                        "reduction " + ExprPrinter.print(r) + " in a loop program: lower the computation first");
        }
    }

    private void operands(Expr... es) {
        for (Expr x : es) {
            if (varies(x)) value(x);
            else bits(x.dtype());
        }
    }
}
