package dev.kiln.jit;

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
import java.util.ArrayList;
import java.util.List;

/**
 * Expressions to LLVM IR. {@code and}, {@code or} and {@code select} evaluate their second
 * operand (or the unchosen branch) only when needed, as the interpreter does, whenever it could
 * fault (it loads memory or divides by a variable): with branches in scalar code, under a lane
 * mask in vector code. Side-effect-free operands are computed eagerly, which lets LLVM use
 * selects and masks instead of branches.
 */
final class ExprGen {
    private ExprGen() {}

    static Val gen(CodeGen g, Expr e) {
        return switch (e) {
            case IntImm c ->
                widensInIndex(g, c.dtype())
                        ? Val.uniform(Long.toString(c.value()), DType.INT64)
                        : Val.uniform(IrTypes.intConst(c.dtype(), c.value()), c.dtype());
            case FloatImm c -> Val.uniform(IrTypes.floatConst(c.dtype(), c.value()), c.dtype());
            case Var v -> inIndexWidth(g, g.var(v));
            case Binary b -> Arith.binary(g, b, inIndexWidth(g, gen(g, b.a())), inIndexWidth(g, gen(g, b.b())));
            case Compare c -> Arith.compare(g, c.op(), inIndexWidth(g, gen(g, c.a())), inIndexWidth(g, gen(g, c.b())));
            case And a -> logical(g, a.a(), a.b(), true);
            case Or o -> logical(g, o.a(), o.b(), false);
            case Not n -> g.op2("xor", gen(g, n.a()), Val.uniform("true", DType.BOOL), DType.BOOL);
            case Select s -> select(g, s);
            case Cast c -> {
                Val v = NarrowCasts.enabled() ? NarrowCasts.gen(g, c) : null;
                yield v != null ? v : Casts.cast(g, gen(g, c.value()), c.dtype());
            }
            case Call c -> {
                // a call computes in its own type (llvm.abs.i32, ...), even inside an index; its result is widened
                // there
                boolean saved = g.inIndex;
                g.inIndex = false;
                Val r;
                try {
                    List<Val> args = new ArrayList<>();
                    for (Expr a : c.args()) args.add(gen(g, a));
                    r = Arith.call(g, c, args);
                } finally {
                    g.inIndex = saved;
                }
                yield inIndexWidth(g, r);
            }
            case BufferLoad l -> Memory.load(g, l.buffer(), indices(g, l.indices()));
            case TensorRead r ->
                throw new KilnException("function '" + g.funcName + "': tensor read " + ExprPrinter.print(r)
                        + " must be lowered to a buffer load before code generation");
            case Reduce r ->
                throw new KilnException("function '" + g.funcName + "': reduction " + ExprPrinter.print(r)
                        + " must be lowered to loops before code generation");
        };
    }

    /**
     * Index expressions, generated with nsw integer arithmetic in i64: every narrower integer (a loop variable, a
     * constant, a loaded index) is widened where it enters the expression, not once at the end. An i32 index would
     * be sign-extended to i64 after its last add, and LLVM's reassociation drops the adds' nsw, so the extension could
     * no longer be pushed through them: the address of a load whose index mixes a floordiv of the parallel loop with
     * the inner loops was then recomputed per access (lea, movslq, and no unrolled addressing), measured 35% slower
     * on a 3x3 conv (docs/PERFORMANCE.md, twenty-ninth session).
     */
    static List<Val> indices(CodeGen g, List<Expr> idx) {
        boolean saved = g.inIndex;
        g.inIndex = true;
        try {
            List<Val> out = new ArrayList<>();
            for (Expr e : idx) out.add(gen(g, e));
            return out;
        } finally {
            g.inIndex = saved;
        }
    }

    /** Whether an integer of type {@code t} is widened to i64 here: inside an index, narrower than 64 bits. */
    private static boolean widensInIndex(CodeGen g, DType t) {
        return g.inIndex && t.isInt() && t.bits() < 64;
    }

    /** {@code v} widened to i64 inside an index (see {@link #indices}), unchanged elsewhere. */
    private static Val inIndexWidth(CodeGen g, Val v) {
        return widensInIndex(g, v.dtype()) ? Memory.widen(g, v) : v;
    }

    /** Whether evaluating {@code e} can fault or report (a load, a division by a non-constant). */
    static boolean mayFault(Expr e) {
        boolean[] bad = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad) bad[0] = true;
            if (x instanceof Binary b && b.op().integerOnly() && !(b.b() instanceof IntImm c && c.value() != 0)) {
                bad[0] = true;
            }
        });
        return bad[0];
    }

    private static Val logical(CodeGen g, Expr a, Expr b, boolean isAnd) {
        String op = isAnd ? "and" : "or";
        Val va = gen(g, a);
        if (!mayFault(b)) return g.op2(op, va, gen(g, b), DType.BOOL);
        // b runs only where a does not decide the result
        Val decides = isAnd ? va : g.op2("xor", va, Val.uniform("true", DType.BOOL), DType.BOOL);
        Val vb = guarded(g, decides, b, isAnd ? "false" : "true");
        return g.op2(op, va, vb, DType.BOOL);
    }

    private static Val select(CodeGen g, Select s) {
        Val c = gen(g, s.cond());
        boolean tSafe = !mayFault(s.t()), fSafe = !mayFault(s.f());
        if (tSafe && fSafe) return g.select(c, inIndexWidth(g, gen(g, s.t())), inIndexWidth(g, gen(g, s.f())));
        Val notC = g.op2("xor", c, Val.uniform("true", DType.BOOL), DType.BOOL);
        Val t = tSafe ? gen(g, s.t()) : guarded(g, c, s.t(), null);
        Val f = fSafe ? gen(g, s.f()) : guarded(g, notC, s.f(), null);
        return g.select(c, inIndexWidth(g, t), inIndexWidth(g, f));
    }

    /**
     * Evaluates {@code e} only where {@code when} holds: under a narrowed mask in vector code, in
     * a branch otherwise. Where it does not run the value is {@code otherwise} (poison if null).
     */
    private static Val guarded(CodeGen g, Val when, Expr e, String otherwise) {
        String other = otherwise == null ? "poison" : otherwise;
        if (!when.isUniform()) {
            Val saved = g.mask;
            g.mask = g.andMask(saved, when);
            try {
                return gen(g, e);
            } finally {
                g.mask = saved;
            }
        }
        String yes = g.fn.label("then"), join = g.fn.label("join");
        String from = g.fn.currentBlock();
        g.fn.condBr(when.ref(), yes, join);
        g.fn.block(yes);
        Val v = gen(g, e);
        String vref = v.form() == Val.Form.LINEAR ? g.vector(v) : v.ref();
        String ty = v.isUniform() ? IrTypes.reg(v.dtype()) : g.vty(v.dtype());
        if (!v.isUniform() && otherwise != null) other = g.splat(otherwise, IrTypes.reg(v.dtype()));
        String yesEnd = g.fn.currentBlock();
        g.fn.br(join);
        g.fn.block(join);
        String phi = g.fn.emit("phi " + ty + " [ " + vref + ", %" + yesEnd + " ], [ " + other + ", %" + from + " ]");
        return v.isUniform() ? Val.uniform(phi, v.dtype()) : Val.varying(phi, v.dtype());
    }
}
