package dev.kiln.lower;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Literals;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * Explicit unrolling: a loop becomes copies of its body, one per iteration, with the loop
 * variable replaced by its value ({@code min + k}).
 *
 * <ul>
 *   <li>A loop of kind {@link ForKind#UNROLLED} with constant extent is always unrolled.</li>
 *   <li>Under {@code pragma auto_unroll_max_step = N} (Ansor's annotation, with TVM's
 *       {@code unroll_explicit} semantics), a serial loop of constant extent is unrolled when
 *       every loop inside it was unrolled too and its step count is at most N. The step count of
 *       a loop is its extent times the step count of its body, where a store, an evaluate and a
 *       barrier count 1, a sequence or an if sums its parts, and let and allocate count their
 *       body: for a perfect nest, the product of the extents. Parallel, vectorized and
 *       thread-bound loops are never unrolled by the pragma, and a loop around one of them stays
 *       a loop. The pragma itself is dropped; an inner pragma overrides an outer one for its
 *       body, and {@code N = 0} turns auto-unrolling off. Unlike TVM there is no separate limit
 *       on the depth of an unrolled nest: the step count and the size cap bound it.</li>
 *   <li>Size cap: a loop whose copies would hold more than {@code maxUnrolledStmts} statements
 *       ({@link #DEFAULT_MAX_UNROLLED_STMTS} by default; extent times the statements of its body,
 *       already unrolled) is not unrolled. An explicitly unrolled loop then stays an
 *       {@code UNROLLED} loop, a hint left to the backend; the decision is logged (DEBUG).</li>
 *   <li>A loop of kind {@code UNROLLED} whose extent is not constant is left as it is.</li>
 * </ul>
 *
 * Copies share the variables of the loops and lets inside them: each copy is its own scope.
 */
public final class UnrollLoops {
    /** The default size cap: at most this many statements produced by unrolling one loop. */
    public static final long DEFAULT_MAX_UNROLLED_STMTS = 4096;

    private static final System.Logger LOG = System.getLogger(UnrollLoops.class.getName());

    private final long maxStmts;

    private UnrollLoops(long maxStmts) {
        this.maxStmts = maxStmts;
    }

    public static PrimFunc apply(PrimFunc f) {
        return apply(f, DEFAULT_MAX_UNROLLED_STMTS);
    }

    /** Unrolls with a given size cap (statements produced by unrolling one loop). */
    public static PrimFunc apply(PrimFunc f, long maxUnrolledStmts) {
        if (maxUnrolledStmts < 1)
            throw new dev.kiln.ir.KilnException("unroll size cap must be positive, got " + maxUnrolledStmts);
        return f.withBody(new UnrollLoops(maxUnrolledStmts).visit(f.body(), 0).stmt());
    }

    /**
     * A rewritten statement, its step count (saturating at {@link Long#MAX_VALUE}), and whether
     * a loop inside it stays a loop.
     */
    private record R(Stmt stmt, long steps, boolean keepsLoop) {}

    private R visit(Stmt s, long autoMax) {
        return switch (s) {
            case For f -> loop(f, autoMax);
            case Store x -> new R(x, 1, false);
            case Evaluate x -> new R(x, 1, false);
            case Barrier x -> new R(x, 1, false);
            case Seq q -> {
                List<Stmt> out = new ArrayList<>();
                long steps = 0;
                boolean keeps = false, changed = false;
                for (Stmt c : q.stmts()) {
                    R r = visit(c, autoMax);
                    out.add(r.stmt());
                    changed |= r.stmt() != c;
                    steps = satAdd(steps, r.steps());
                    keeps |= r.keepsLoop();
                }
                yield new R(changed ? Seq.of(out) : q, steps, keeps);
            }
            case IfThenElse i -> {
                R t = visit(i.then(), autoMax);
                R e = i.otherwise() == null ? null : visit(i.otherwise(), autoMax);
                Stmt es = e == null ? null : e.stmt();
                Stmt st = t.stmt() == i.then() && es == i.otherwise() ? i : new IfThenElse(i.cond(), t.stmt(), es);
                yield new R(
                        st,
                        satAdd(t.steps(), e == null ? 0 : e.steps()),
                        t.keepsLoop() || (e != null && e.keepsLoop()));
            }
            case Let l -> {
                R b = visit(l.body(), autoMax);
                yield new R(b.stmt() == l.body() ? l : new Let(l.var(), l.value(), b.stmt()), b.steps(), b.keepsLoop());
            }
            case Allocate a -> {
                R b = visit(a.body(), autoMax);
                yield new R(b.stmt() == a.body() ? a : new Allocate(a.buffer(), b.stmt()), b.steps(), b.keepsLoop());
            }
            case Pragma p -> {
                if (p.key().equals(Pragma.AUTO_UNROLL_MAX_STEP)) yield visit(p.body(), Math.max(0, p.value()));
                // a tensorized nest is one instruction: left as it is, counted as one step
                if (p.tensorIntrinsic() != null) yield new R(p, 1, false);
                R b = visit(p.body(), autoMax);
                yield new R(
                        b.stmt() == p.body() ? p : new Pragma(p.key(), p.value(), b.stmt()), b.steps(), b.keepsLoop());
            }
        };
    }

    private R loop(For f, long autoMax) {
        R body = visit(f.body(), autoMax);
        For rebuilt = f.withBody(body.stmt());
        var extent = PassSupport.constant(f.extent());
        if (extent.isEmpty() || extent.getAsLong() < 0) return new R(rebuilt, Long.MAX_VALUE, true);
        long ext = extent.getAsLong();
        long steps = satMul(ext, body.steps());
        boolean explicit = f.kind() == ForKind.UNROLLED;
        boolean auto = autoMax > 0 && f.kind() == ForKind.SERIAL && !body.keepsLoop() && steps <= autoMax;
        if (!explicit && !auto) return new R(rebuilt, steps, true);
        long size = satMul(ext, Stmts.size(body.stmt(), maxStmts));
        if (size > maxStmts) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> "not unrolling loop '" + f.var().name() + "' (extent " + ext + "): " + size
                            + " statements would exceed the cap of " + maxStmts);
            return new R(rebuilt, steps, true);
        }
        List<Stmt> copies = new ArrayList<>();
        for (long k = 0; k < ext; k++) {
            Expr value = f.min() instanceof IntImm m
                    ? Literals.of(f.var().dtype(), Math.addExact(m.value(), k))
                    : f.min().add(Literals.of(f.var().dtype(), k));
            copies.add(Stmts.substitute(body.stmt(), f.var(), value));
        }
        return new R(Seq.of(copies), steps, body.keepsLoop());
    }

    private static long satAdd(long a, long b) {
        long r = a + b;
        return r < 0 ? Long.MAX_VALUE : r;
    }

    private static long satMul(long a, long b) {
        if (a == 0 || b == 0) return 0;
        return a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
    }
}
