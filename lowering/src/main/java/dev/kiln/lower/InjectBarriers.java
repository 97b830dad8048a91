package dev.kiln.lower;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
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
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Inserts {@link Barrier}s ({@code __syncthreads()}) into the kernels of a GPU program wherever
 * one thread may read shared memory that another thread wrote, or overwrite shared memory that
 * another thread may still be reading:
 * <ul>
 *   <li>between a statement that writes a shared buffer (a cooperative fetch: a threadIdx loop
 *       nest storing to it) and a later statement of the same sequence that reads it, and between
 *       a read and a later write;
 *   <li>at the end of a loop body (the outer reduction loop {@code k.0} around a fetch and its
 *       use) when what the body reads last conflicts with what the next iteration writes first.
 * </ul>
 * Only shared buffers are considered: a local buffer belongs to one thread, and threads of
 * different blocks never share memory inside a kernel. Accesses conflict when they touch the same
 * buffer and one of them writes; their indices are not compared, so a thread updating only its
 * own element of a shared buffer in a loop also gets a barrier per iteration (correct, if
 * cautious); a tensorized nest is one operation whose reads of its accumulator do not count
 * ({@code nestAccesses}). A barrier goes only where every thread of the block arrives: never under a
 * condition, inside a loop that runs on part of the threads, inside a loop that binds an axis
 * again (it runs once per thread), or inside a vectorized or parallel loop; such statements are
 * treated as a whole, and a conflict inside one (a fetch and its use both under one condition)
 * is refused with a message naming the buffer, since no barrier can make it safe. Barriers
 * already present count. A vthread loop counts as a serial loop.
 */
public final class InjectBarriers {
    private InjectBarriers() {}

    public static PrimFunc apply(PrimFunc f) {
        return f.withBody(host(f, f.body()));
    }

    /** For the pipeline: the limits are not needed. */
    public static PrimFunc apply(PrimFunc f, GpuLimits limits) {
        return apply(f);
    }

    private static Stmt host(PrimFunc f, Stmt s) {
        return new StmtRewriter() {
            @Override
            public Stmt visit(Stmt x) {
                return x instanceof For loop && loop.kind() == ForKind.THREAD_BOUND
                        ? new Planner(f, GpuKernel.of(loop))
                                .plan(loop, EnumSet.noneOf(ThreadAxis.class), null)
                                .stmt()
                        : rewriteChildren(x);
            }
        }.visit(s);
    }

    /** The shared buffers a piece of code reads and writes. */
    private static final class Accesses {
        final Set<Buffer> reads = Collections.newSetFromMap(new IdentityHashMap<>());
        final Set<Buffer> writes = Collections.newSetFromMap(new IdentityHashMap<>());

        static Accesses none() {
            return new Accesses();
        }

        Accesses copy() {
            Accesses a = new Accesses();
            a.addAll(this);
            return a;
        }

        void addAll(Accesses o) {
            reads.addAll(o.reads);
            writes.addAll(o.writes);
        }

        /**
         * A buffer that code with these accesses and then code with {@code later}'s both touch,
         * one of them writing (so a barrier must separate them), or null.
         */
        Buffer conflict(Accesses later) {
            for (Buffer b : writes) if (later.reads.contains(b)) return b;
            for (Buffer b : reads) if (later.writes.contains(b)) return b;
            return null;
        }

        void read(Expr e) {
            Exprs.forEach(e, x -> {
                if (x instanceof BufferLoad l && l.buffer().scope() == MemoryScope.SHARED)
                    reads.add(l.buffer().base());
            });
        }
    }

    /**
     * A planned statement: the accesses before its first barrier ({@code head}) and after its
     * last ({@code tail}); without a barrier both are all of its accesses.
     */
    private record Summary(Stmt stmt, Accesses head, Accesses tail, boolean synced) {
        static Summary atomic(Stmt s, Accesses all) {
            return new Summary(s, all, all, false);
        }
    }

    private static final class Planner {
        private final PrimFunc f;
        private final GpuKernel kernel;

        Planner(PrimFunc f, GpuKernel kernel) {
            this.f = f;
            this.kernel = kernel;
        }

        /**
         * Plans {@code s}; {@code bound} are the axes bound around it. {@code noBarrier} is null
         * where every thread of the block arrives, and otherwise says why a barrier cannot go
         * there: then a needed barrier is an error.
         */
        Summary plan(Stmt s, EnumSet<ThreadAxis> bound, String noBarrier) {
            return switch (s) {
                case For loop -> planFor(loop, bound, noBarrier);
                case Seq q -> planSeq(q, bound, noBarrier);
                case Allocate a -> {
                    Summary b = plan(a.body(), bound, noBarrier);
                    yield new Summary(
                            b.stmt() == a.body() ? a : new Allocate(a.buffer(), b.stmt()),
                            b.head(),
                            b.tail(),
                            b.synced());
                }
                case Pragma p when p.tensorIntrinsic() != null -> Summary.atomic(p, nestAccesses(p));
                case Pragma p -> {
                    Summary b = plan(p.body(), bound, noBarrier);
                    yield new Summary(
                            b.stmt() == p.body() ? p : new Pragma(p.key(), p.value(), b.stmt()),
                            b.head(),
                            b.tail(),
                            b.synced());
                }
                case Let l -> {
                    Accesses v = Accesses.none();
                    v.read(l.value());
                    Summary b = plan(
                            l.body(),
                            bound,
                            noBarrier != null || v.reads.isEmpty()
                                    ? noBarrier
                                    : "after a let that reads shared memory");
                    if (!v.reads.isEmpty()) yield Summary.atomic(l, accesses(l));
                    yield new Summary(
                            b.stmt() == l.body() ? l : new Let(l.var(), l.value(), b.stmt()),
                            b.head(),
                            b.tail(),
                            b.synced());
                }
                case IfThenElse i -> {
                    String why = noBarrier != null ? noBarrier : "under the condition " + ExprPrinter.print(i.cond());
                    plan(i.then(), bound, why);
                    if (i.otherwise() != null) plan(i.otherwise(), bound, why);
                    yield Summary.atomic(i, accesses(i));
                }
                case Store st -> Summary.atomic(st, accesses(st));
                case Evaluate e -> Summary.atomic(e, accesses(e));
                case Barrier b -> new Summary(b, Accesses.none(), Accesses.none(), true);
            };
        }

        private Summary planFor(For loop, EnumSet<ThreadAxis> bound, String noBarrier) {
            String name = "loop '" + loop.var().name() + "'";
            switch (loop.kind()) {
                case PARALLEL, VECTORIZED -> {
                    return whole(
                            loop,
                            bound,
                            noBarrier != null
                                    ? noBarrier
                                    : "inside " + loop.kind().displayName() + " " + name);
                }
                case THREAD_BOUND -> {
                    ThreadAxis axis = loop.thread();
                    if (axis != ThreadAxis.VTHREAD) {
                        EnumSet<ThreadAxis> inner = EnumSet.copyOf(bound);
                        inner.add(axis);
                        if (noBarrier != null) return whole(loop, inner, noBarrier);
                        if (bound.contains(axis)) {
                            return whole(loop, inner, "inside " + name + ", which binds " + axis.tag() + " again");
                        }
                        if (!(loop.extent() instanceof IntImm e) || e.value() < kernel.extent(axis)) {
                            return whole(
                                    loop,
                                    inner,
                                    "inside " + name + ", which runs on part of the " + axis.tag() + " threads");
                        }
                        Summary b = plan(loop.body(), inner, null);
                        return new Summary(loop.withBody(b.stmt()), b.head(), b.tail(), b.synced());
                    }
                }
                case SERIAL, UNROLLED -> {}
            }
            boolean constant = loop.min() instanceof IntImm && loop.extent() instanceof IntImm;
            if (!constant && noBarrier == null)
                return whole(loop, bound, "inside " + name + ", whose trip count is not a constant");
            Summary b = plan(loop.body(), bound, noBarrier);
            boolean repeats = !(loop.extent() instanceof IntImm e) || e.value() > 1;
            Accesses carried = b.synced() ? b.tail() : b.head();
            Buffer c = repeats ? carried.conflict(b.head()) : null;
            if (c != null) {
                if (noBarrier != null) throw unplaceable(c, noBarrier);
                Stmt body = Seq.of(b.stmt(), new Barrier());
                return new Summary(loop.withBody(body), b.head(), Accesses.none(), true);
            }
            return new Summary(loop.withBody(b.stmt()), b.head(), b.tail(), b.synced());
        }

        /** A statement no barrier goes into: checked inside, then treated as one access set. */
        private Summary whole(For loop, EnumSet<ThreadAxis> bound, String why) {
            plan(loop.body(), bound, why);
            return Summary.atomic(loop, accesses(loop));
        }

        private Summary planSeq(Seq q, EnumSet<ThreadAxis> bound, String noBarrier) {
            List<Stmt> out = new ArrayList<>();
            Accesses head = Accesses.none();
            Accesses pending = Accesses.none();
            boolean synced = false;
            boolean changed = false;
            for (Stmt c : q.stmts()) {
                Summary cs = plan(c, bound, noBarrier);
                Buffer conflict = pending.conflict(cs.head());
                if (conflict != null) {
                    if (noBarrier != null) throw unplaceable(conflict, noBarrier);
                    out.add(new Barrier());
                    changed = true;
                    pending = Accesses.none();
                    synced = true;
                }
                out.add(cs.stmt());
                changed |= cs.stmt() != c;
                if (!synced) head.addAll(cs.head());
                if (cs.synced()) {
                    synced = true;
                    pending = cs.tail().copy();
                } else {
                    pending.addAll(cs.head());
                }
            }
            return new Summary(changed ? new Seq(out) : q, head, pending, synced);
        }

        private KilnException unplaceable(Buffer b, String where) {
            return new KilnException("function '" + f.name() + "': in " + kernel.describe() + ", shared buffer '"
                    + b.name()
                    + "' is written and read by different statements " + where + ", where not every thread of the block"
                    + " arrives, so no barrier can separate them; compute the shared stage outside that code");
        }
    }

    /**
     * The shared-buffer accesses of a tensorized nest, which runs as one operation of the thread
     * (on a GPU, of the warp) that owns its tile of the accumulator: its reads of the accumulator
     * are the accumulation itself (the tensorize step checked the pattern {@code C = C + ...}),
     * so only its write counts. Like a thread's update of its own element, a warp's update of its
     * own tile conflicts with no other thread's; with its reads counted, a nest accumulating into a
     * shared tile would get a barrier after every step of the reduction.
     */
    private static Accesses nestAccesses(Pragma p) {
        Accesses a = accesses(p);
        Stmts.forEachStmt(p.body(), x -> {
            if (x instanceof Store st) a.reads.remove(st.buffer().base());
        });
        return a;
    }

    /** Every shared-buffer access of a statement. */
    private static Accesses accesses(Stmt s) {
        Accesses a = Accesses.none();
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                if (x instanceof Store st && st.buffer().scope() == MemoryScope.SHARED)
                    a.writes.add(st.buffer().base());
                visitChildren(x);
            }

            @Override
            public void visitExpr(Expr e) {
                a.read(e);
            }
        }.visit(s);
        return a;
    }
}
