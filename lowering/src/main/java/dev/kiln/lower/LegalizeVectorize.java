package dev.kiln.lower;

import dev.kiln.arith.IntRange;
import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
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
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Vectorize legalisation: after it, every {@link ForKind#VECTORIZED} loop has a constant extent
 * and a body a backend can turn into vector instructions directly:
 *
 * <ul>
 *   <li>only {@code Store}, {@code Let} and {@code Seq} statements (no loop, allocate, barrier,
 *       evaluate, pragma or if);</li>
 *   <li>an {@code if} whose condition has conjuncts that do not depend on the loop is hoisted
 *       out of it (loop unswitching: {@code for v { if (c && d) S }} becomes
 *       {@code if (c) { for v { if (d) S } }}, and a body with an else branch gets one loop
 *       version per branch). A conjunct is invariant when it mentions neither the loop variable
 *       nor a variable bound inside the loop, and reads no buffer the loop writes; one that
 *       follows a conjunct that stays moves only if evaluating it cannot fail (no load, no
 *       integer division by a non-constant), since {@code &&} would not have evaluated it. At
 *       most {@link #MAX_VERSIONS} versions are made of one loop;</li>
 *   <li>no store whose indices do not depend on the loop variable (after simplifying them with
 *       the loop's range): every lane would write one element, as a vectorized reduction
 *       does;</li>
 *   <li>no loop-carried dependence: a buffer the loop writes is read only at the very indices
 *       it is written at (structurally equal), and then written at no other index.</li>
 * </ul>
 *
 * A loop that cannot be made so is demoted, to {@link ForKind#UNROLLED} when its extent is at
 * most {@link #MAX_UNROLL_EXTENT}, to {@link ForKind#SERIAL} otherwise. Demotions are never
 * silent: each is logged (DEBUG) and listed, with its reason, in the {@link Result} of
 * {@link #run}. Vectorized loops of constant extent 0 never run and are removed. Inner loops are
 * legalised before the loops around them.
 */
public final class LegalizeVectorize {
    /** Demoted loops of at most this extent become unrolled rather than serial. */
    public static final long MAX_UNROLL_EXTENT = 16;
    /** Loop versions made by hoisting conditions out of one vectorized loop, at most. */
    public static final int MAX_VERSIONS = 8;

    private static final System.Logger LOG = System.getLogger(LegalizeVectorize.class.getName());

    /**
     * A vectorized loop that was demoted.
     *
     * @param loop   the loop variable's name
     * @param extent the loop's extent, or -1 when it is not constant
     * @param to     the kind it got
     * @param reason why it cannot be vectorized, for a person
     */
    public record Demotion(String loop, long extent, ForKind to, String reason) {
        @Override
        public String toString() {
            return "loop '" + loop + "' (extent " + (extent < 0 ? "?" : extent) + ") -> " + to.displayName() + ": "
                    + reason;
        }
    }

    /** The legalised function and the loops demoted on the way, in program order. */
    public record Result(PrimFunc func, List<Demotion> demotions) {
        public Result {
            demotions = List.copyOf(demotions);
        }
    }

    private final List<Demotion> demotions = new ArrayList<>();

    private LegalizeVectorize() {}

    public static PrimFunc apply(PrimFunc f) {
        return run(f).func();
    }

    /** Legalises {@code f} and reports the demotions. */
    public static Result run(PrimFunc f) {
        LegalizeVectorize pass = new LegalizeVectorize();
        Stmt body = new StmtRewriter() {
            @Override
            public Stmt visit(Stmt s) {
                Stmt x = rewriteChildren(s);
                return x instanceof For loop && loop.kind() == ForKind.VECTORIZED ? pass.legalize(loop) : x;
            }
        }.visit(f.body());
        return new Result(f.withBody(body), pass.demotions);
    }

    private Stmt legalize(For f) {
        var extent = PassSupport.constant(f.extent());
        if (extent.isEmpty()) return demote(f, "its extent " + f.extent() + " is not constant");
        if (extent.getAsLong() <= 0) return Seq.empty();
        int[] versions = {1};
        return unswitch(f, versions);
    }

    /** Hoists invariant conditions out of {@code f}, then checks each loop version. */
    private Stmt unswitch(For f, int[] versions) {
        Set<Var> inner = boundInside(f);
        Set<Buffer> written = written(f.body());
        IfThenElse found = null;
        List<Expr> invariant = new ArrayList<>(), rest = new ArrayList<>();
        for (IfThenElse i : topLevelIfs(f.body())) {
            invariant.clear();
            rest.clear();
            for (Expr c : conjuncts(i.cond())) {
                // after a conjunct that stays, only one that cannot fail may move: && short-circuits
                boolean hoist = isInvariant(c, inner, written) && (rest.isEmpty() || cannotFail(c));
                (hoist ? invariant : rest).add(c);
            }
            if (!invariant.isEmpty()) {
                found = i;
                break;
            }
        }
        if (found == null || versions[0] >= MAX_VERSIONS) return check(f, found != null);
        versions[0]++;
        IfThenElse target = found;
        Stmt whenTrue = rest.isEmpty() ? target.then() : new IfThenElse(and(rest), target.then(), target.otherwise());
        Stmt whenFalse = target.otherwise() == null ? Seq.empty() : target.otherwise();
        Stmt thenLoop = versionOf(f, replace(f.body(), target, whenTrue), versions);
        Stmt elseLoop = versionOf(f, replace(f.body(), target, whenFalse), versions);
        return new IfThenElse(and(invariant), thenLoop, Stmts.isEmpty(elseLoop) ? null : elseLoop);
    }

    private Stmt versionOf(For f, Stmt body, int[] versions) {
        if (Stmts.isEmpty(body)) return body;
        return unswitch(f.withBody(body), versions);
    }

    /** Checks a loop whose invariant conditions are hoisted; demotes it if it is not vectorizable. */
    private Stmt check(For f, boolean capped) {
        String why = reason(f.body(), f, Map.of(), capped);
        if (why == null) why = dependence(f);
        return why == null ? f : demote(f, why);
    }

    /**
     * Why the body {@code s} of loop {@code f} cannot be vectorized, or null. {@code lets} maps the
     * let-bound variables in scope to their values (themselves substituted).
     */
    private String reason(Stmt s, For f, Map<Var, Expr> lets, boolean capped) {
        return switch (s) {
            case Store st -> {
                Simplifier simp = new Simplifier();
                if (f.min() instanceof dev.kiln.ir.IntImm m) {
                    simp = simp.withRange(
                            f.var(),
                            IntRange.ofExtent(
                                    m.value(), PassSupport.constant(f.extent()).getAsLong()));
                }
                for (Expr idx : st.indices()) {
                    if (Exprs.uses(simp.simplify(Exprs.substitute(idx, lets)), f.var())) yield null;
                }
                yield "the store to '" + st.buffer().name() + "' writes one element from every lane"
                        + " (its indices do not depend on the loop: a reduction)";
            }
            case Let l -> {
                Map<Var, Expr> inner = new IdentityHashMap<>(lets);
                inner.put(l.var(), Exprs.substitute(l.value(), lets));
                yield reason(l.body(), f, inner, capped);
            }
            case Seq q -> {
                for (Stmt c : q.stmts()) {
                    String r = reason(c, f, lets, capped);
                    if (r != null) yield r;
                }
                yield null;
            }
            case IfThenElse i ->
                capped
                        ? "more than " + MAX_VERSIONS + " loop versions would be needed to hoist its conditions"
                        : ifReason(i, f);
            case For x -> "it holds loop '" + x.var().name() + "'";
            case Allocate x -> "it allocates buffer '" + x.buffer().name() + "'";
            case Barrier x -> "it holds a barrier";
            case Evaluate x -> "it evaluates " + x.value() + " for effect";
            case Pragma x -> "it holds pragma " + x.key();
        };
    }

    private static String ifReason(IfThenElse i, For f) {
        Set<Var> inner = boundInside(f);
        boolean[] varies = {false};
        Exprs.forEach(i.cond(), x -> {
            if (x instanceof Var v && inner.contains(v)) varies[0] = true;
        });
        if (varies[0]) return "it holds an if whose condition " + i.cond() + " depends on the loop";
        Set<Buffer> written = written(f.body());
        String[] read = {null};
        Exprs.forEach(i.cond(), x -> {
            if (x instanceof BufferLoad l && written.contains(l.buffer().base()))
                read[0] = l.buffer().base().name();
        });
        return "it holds an if whose condition " + i.cond() + " reads buffer '" + read[0] + "', which the loop writes";
    }

    /** A loop-carried dependence through memory, or null. */
    private static String dependence(For f) {
        Map<Buffer, Set<List<Expr>>> stores = new LinkedHashMap<>();
        Map<Buffer, Set<List<Expr>>> loads = new IdentityHashMap<>();
        Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof Store st)
                stores.computeIfAbsent(st.buffer().base(), b -> new HashSet<>()).add(st.indices());
        });
        Stmts.forEachExprNode(f.body(), x -> {
            if (x instanceof BufferLoad l)
                loads.computeIfAbsent(l.buffer().base(), b -> new HashSet<>()).add(l.indices());
        });
        for (var e : stores.entrySet()) {
            Set<List<Expr>> read = loads.get(e.getKey());
            if (read == null) continue;
            Set<List<Expr>> all = new HashSet<>(read);
            all.addAll(e.getValue());
            if (all.size() > 1) {
                return "it writes buffer '" + e.getKey().name() + "' and reads it at other indices"
                        + " (a dependence between iterations)";
            }
        }
        return null;
    }

    private Stmt demote(For f, String why) {
        var extent = PassSupport.constant(f.extent());
        long ext = extent.isPresent() ? extent.getAsLong() : -1;
        ForKind to = ext >= 0 && ext <= MAX_UNROLL_EXTENT ? ForKind.UNROLLED : ForKind.SERIAL;
        Demotion d = new Demotion(f.var().name(), ext, to, why);
        demotions.add(d);
        LOG.log(System.Logger.Level.DEBUG, () -> "not vectorizing " + d);
        return new For(f.var(), f.min(), f.extent(), to, null, f.body());
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** The ifs reachable from the top of a loop body through sequences and lets. */
    private static List<IfThenElse> topLevelIfs(Stmt s) {
        List<IfThenElse> out = new ArrayList<>();
        collectIfs(s, out);
        return out;
    }

    private static void collectIfs(Stmt s, List<IfThenElse> out) {
        switch (s) {
            case IfThenElse i -> out.add(i);
            case Seq q -> q.stmts().forEach(c -> collectIfs(c, out));
            case Let l -> collectIfs(l.body(), out);
            default -> {}
        }
    }

    /** The loop variable and every variable a let or loop binds inside the loop. */
    private static Set<Var> boundInside(For f) {
        Set<Var> out = Collections.newSetFromMap(new IdentityHashMap<>());
        out.add(f.var());
        Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof Let l) out.add(l.var());
            if (s instanceof For x) out.add(x.var());
        });
        return out;
    }

    /** The buffers (their base memory) a statement stores to. */
    private static Set<Buffer> written(Stmt s) {
        Set<Buffer> out = Collections.newSetFromMap(new IdentityHashMap<>());
        Stmts.forEachStmt(s, x -> {
            if (x instanceof Store st) out.add(st.buffer().base());
        });
        return out;
    }

    /** No load (it may be out of bounds) and no integer division (by zero): evaluating it cannot fail. */
    private static boolean cannotFail(Expr c) {
        boolean[] ok = {true};
        Exprs.forEach(c, x -> {
            if (x instanceof BufferLoad) ok[0] = false;
            if (x instanceof dev.kiln.ir.Binary b
                    && b.op().integerOnly()
                    && !(b.b() instanceof dev.kiln.ir.IntImm k && k.value() != 0)) ok[0] = false;
        });
        return ok[0];
    }

    private static boolean isInvariant(Expr c, Set<Var> inner, Set<Buffer> written) {
        boolean[] ok = {true};
        Exprs.forEach(c, x -> {
            if (x instanceof Var v && inner.contains(v)) ok[0] = false;
            if (x instanceof BufferLoad l && written.contains(l.buffer().base())) ok[0] = false;
        });
        return ok[0];
    }

    private static List<Expr> conjuncts(Expr cond) {
        List<Expr> out = new ArrayList<>();
        List<Expr> todo = new ArrayList<>(List.of(cond));
        while (!todo.isEmpty()) {
            Expr e = todo.removeFirst();
            if (e instanceof dev.kiln.ir.And a) {
                todo.addFirst(a.b());
                todo.addFirst(a.a());
            } else {
                out.add(e);
            }
        }
        return out;
    }

    private static Expr and(List<Expr> conds) {
        Expr c = conds.get(0);
        for (int k = 1; k < conds.size(); k++) c = c.and(conds.get(k));
        return c;
    }

    /** {@code s} with every occurrence of {@code target} (by identity) replaced by {@code by}. */
    private static Stmt replace(Stmt s, IfThenElse target, Stmt by) {
        return flatten(
                new StmtRewriter() {
                    @Override
                    public Stmt visit(Stmt x) {
                        return x == target ? by : rewriteChildren(x);
                    }
                }.visit(s));
    }

    /** Re-flattens sequences after a replacement may have put an empty or nested one inside. */
    private static Stmt flatten(Stmt s) {
        return new StmtRewriter() {
            @Override
            public Stmt visit(Stmt x) {
                Stmt y = rewriteChildren(x);
                if (y instanceof Seq q && q.stmts().stream().anyMatch(c -> c instanceof Seq)) {
                    return Seq.of(
                            q.stmts().stream().filter(c -> !Stmts.isEmpty(c)).toList());
                }
                if (y instanceof Let l && Stmts.isEmpty(l.body())) return l.body();
                return y;
            }
        }.visit(s);
    }
}
