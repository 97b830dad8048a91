package dev.kiln.lower;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Var;
import dev.kiln.schedule.TensorIntrinsic;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizedNest;
import dev.kiln.target.Target;
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
import dev.kiln.tir.StmtPrinter;
import dev.kiln.tir.Store;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The well-formedness verifier (tinygrad's {@code uop/spec.py}, TVM's {@code VerifySSA} and
 * {@code VerifyGPUCode}): what every program between two passes must satisfy. The lowering
 * runner calls it after every pass when {@link Lowering.Options#verify()} is on, and names the
 * pass that broke a rule. The rules ({@link Rule}):
 * <ul>
 *   <li>{@link Rule#BOUND_VARIABLES}: every variable is used inside the loop or let that binds it
 *       (a reduction's axes inside it), and no variable is bound again inside its own scope;
 *   <li>{@link Rule#ALLOCATED_BUFFERS}: every load and store goes to a parameter or to a buffer
 *       allocated around it (views count as their base buffer);
 *   <li>{@link Rule#POSITIVE_EXTENTS}: no loop has a constant extent below 1;
 *   <li>{@link Rule#VECTOR_LANES}: a vectorized loop has a constant extent (its lanes) and a body
 *       of stores, lets and sequences only, so that every value in it has the loop's lanes;
 *   <li>{@link Rule#THREAD_BINDINGS}: on a CPU no loop is thread-bound; on a GPU the bindings pass
 *       {@link VerifyThreadBindings} for the target's {@link GpuLimits}.
 *   <li>{@link Rule#TENSORIZED_NESTS}: a tensorized nest (the body of a {@code tensorize$} pragma) is still the
 *       loops its intrinsic replaces ({@link TensorIntrinsic#loopExtents()}: serial, those extents, in that order)
 *       around one store, the form the backends' intrinsic code reads; a pass that guards, peels or narrows a loop
 *       inside it breaks the instruction.
 * </ul>
 * Some rules hold only from a pass on (vector lanes from {@code legalize-vectorize}, GPU thread
 * bindings from {@code verify-thread-bindings}): a {@link Lowering.Pass} lists the rules it
 * establishes, and the runner checks them from then on.
 */
public final class VerifyWellFormed {
    /** A rule of well-formedness. */
    public enum Rule {
        BOUND_VARIABLES("bound variables"),
        ALLOCATED_BUFFERS("allocated buffers"),
        POSITIVE_EXTENTS("positive extents"),
        VECTOR_LANES("vector lanes"),
        THREAD_BINDINGS("thread bindings"),
        TENSORIZED_NESTS("tensorized nests");

        private final String title;

        Rule(String title) {
            this.title = title;
        }

        public String title() {
            return title;
        }

        /** The rules that hold of every program, from the schedule's loops on. */
        public static Set<Rule> always() {
            return EnumSet.of(BOUND_VARIABLES, ALLOCATED_BUFFERS, POSITIVE_EXTENTS, TENSORIZED_NESTS);
        }
    }

    /**
     * What the verifier checks a program against.
     *
     * @param kind  the target kind, or null for a program that is not yet for one target (no thread rule)
     * @param gpu   the GPU's limits when the kind is CUDA, or null
     * @param rules the rules that hold at this point of the pipeline
     */
    public record Context(Target.Kind kind, GpuLimits gpu, Set<Rule> rules) {
        public Context {
            rules = rules.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(rules));
        }

        public Context with(Set<Rule> more) {
            if (more.isEmpty() || rules.containsAll(more)) return this;
            Set<Rule> all = EnumSet.noneOf(Rule.class);
            all.addAll(rules);
            all.addAll(more);
            return new Context(kind, gpu, all);
        }
    }

    private final PrimFunc f;
    private final Context ctx;
    private final Set<Var> bound = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<Buffer> allocated = Collections.newSetFromMap(new IdentityHashMap<>());

    private VerifyWellFormed(PrimFunc f, Context ctx) {
        this.f = f;
        this.ctx = ctx;
    }

    /** Checks {@code f}; throws a {@link KilnException} naming the rule and the statement that breaks it. */
    public static void check(PrimFunc f, Context ctx) {
        VerifyWellFormed v = new VerifyWellFormed(f, ctx);
        for (Buffer p : f.params()) v.allocated.add(p.base());
        v.stmt(f.body(), null);
        if (ctx.kind() == Target.Kind.CUDA && ctx.gpu() != null && ctx.rules().contains(Rule.THREAD_BINDINGS)) {
            try {
                VerifyThreadBindings.apply(f, ctx.gpu());
            } catch (KilnException e) {
                throw new KilnException(Rule.THREAD_BINDINGS.title() + ": " + e.getMessage(), e);
            }
        }
    }

    private boolean on(Rule r) {
        return ctx.rules().contains(r);
    }

    private KilnException fail(Rule r, String what, Stmt at) {
        String line = StmtPrinter.print(at).lines().findFirst().orElse("").strip();
        return new KilnException(r.title() + ": " + what + ", at `" + line + "`");
    }

    /** Checks {@code s}; {@code vector} is the innermost enclosing vectorized loop, or null. */
    private void stmt(Stmt s, For vector) {
        switch (s) {
            case For loop -> {
                exprs(s, loop.min(), loop.extent());
                if (on(Rule.POSITIVE_EXTENTS) && loop.extent() instanceof IntImm c && c.value() < 1) {
                    throw fail(Rule.POSITIVE_EXTENTS, "loop '" + loop.var().name() + "' has extent " + c.value(), s);
                }
                if (loop.kind() == ForKind.THREAD_BOUND && ctx.kind() == Target.Kind.CPU && on(Rule.THREAD_BINDINGS)) {
                    throw fail(
                            Rule.THREAD_BINDINGS,
                            "loop '" + loop.var().name() + "' is bound to "
                                    + loop.thread().tag() + " on a CPU target",
                            s);
                }
                For vec = vector;
                if (loop.kind() == ForKind.VECTORIZED && on(Rule.VECTOR_LANES)) {
                    if (!(loop.extent() instanceof IntImm)) {
                        throw fail(
                                Rule.VECTOR_LANES,
                                "vectorized loop '" + loop.var().name() + "' has no constant lane count",
                                s);
                    }
                    vec = loop;
                }
                vectorBody(s, vector);
                bind(loop.var(), s);
                stmt(loop.body(), vec);
                bound.remove(loop.var());
            }
            case Let l -> {
                exprs(s, l.value());
                vectorBody(s, vector);
                bind(l.var(), s);
                stmt(l.body(), vector);
                bound.remove(l.var());
            }
            case Store st -> {
                exprs(s, st.indices().toArray(Expr[]::new));
                exprs(s, st.value());
                access(st.buffer(), s);
            }
            case Allocate a -> {
                vectorBody(s, vector);
                boolean added = allocated.add(a.buffer().base());
                stmt(a.body(), vector);
                if (added) allocated.remove(a.buffer().base());
            }
            case Seq q -> q.stmts().forEach(c -> stmt(c, vector));
            case IfThenElse i -> {
                exprs(s, i.cond());
                vectorBody(s, vector);
                stmt(i.then(), vector);
                if (i.otherwise() != null) stmt(i.otherwise(), vector);
            }
            case Evaluate e -> {
                exprs(s, e.value());
                vectorBody(s, vector);
            }
            case Pragma p -> {
                vectorBody(s, vector);
                if (p.tensorIntrinsic() != null && on(Rule.TENSORIZED_NESTS)) nest(p);
                stmt(p.body(), vector);
            }
            case Barrier b -> vectorBody(s, vector);
        }
    }

    /** Refuses a tensorized nest that is not its intrinsic's loops around one store (unknown names: the backend's). */
    private void nest(Pragma p) {
        TensorIntrinsic in;
        try {
            in = TensorIntrinsics.get(p.tensorIntrinsic());
        } catch (KilnException e) {
            return;
        }
        try {
            TensorizedNest.read(p, in, "tensorized nest of '" + in.name() + "'");
        } catch (KilnException e) {
            throw fail(Rule.TENSORIZED_NESTS, e.getMessage(), p.body());
        }
    }

    /** Refuses {@code s} inside a vectorized loop unless it is a store, let or sequence. */
    private void vectorBody(Stmt s, For vector) {
        if (vector == null || s instanceof Store || s instanceof Let || s instanceof Seq) return;
        throw fail(
                Rule.VECTOR_LANES,
                "vectorized loop '" + vector.var().name() + "' holds a "
                        + s.getClass().getSimpleName() + ", whose lanes would not be the loop's",
                s);
    }

    private void bind(Var v, Stmt at) {
        if (!bound.add(v) && on(Rule.BOUND_VARIABLES)) {
            throw fail(Rule.BOUND_VARIABLES, "variable '" + v.name() + "' is bound again inside its own scope", at);
        }
    }

    private void access(Buffer b, Stmt at) {
        if (on(Rule.ALLOCATED_BUFFERS) && !allocated.contains(b.base())) {
            throw fail(
                    Rule.ALLOCATED_BUFFERS,
                    "buffer '" + b.name() + "' is accessed outside its allocation and is not a" + " parameter",
                    at);
        }
    }

    private void exprs(Stmt at, Expr... es) {
        for (Expr e : es) expr(e, at);
    }

    private void expr(Expr e, Stmt at) {
        switch (e) {
            case Var v -> {
                if (on(Rule.BOUND_VARIABLES) && !bound.contains(v)) {
                    throw fail(
                            Rule.BOUND_VARIABLES,
                            "variable '" + v.name() + "' is used outside every loop or let that" + " binds it",
                            at);
                }
            }
            case BufferLoad l -> {
                access(l.buffer(), at);
                l.indices().forEach(i -> expr(i, at));
            }
            case Reduce r -> {
                Set<Var> added = Collections.newSetFromMap(new IdentityHashMap<>());
                for (Var a : r.axes()) if (bound.add(a)) added.add(a);
                Exprs.children(r).forEach(c -> expr(c, at));
                bound.removeAll(added);
            }
            default -> Exprs.children(e).forEach(c -> expr(c, at));
        }
    }
}
