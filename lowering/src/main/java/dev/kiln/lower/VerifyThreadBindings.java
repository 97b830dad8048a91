package dev.kiln.lower;

import dev.kiln.ir.Buffer;
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
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Checks that a program's thread bindings make a valid GPU program, so that a bad schedule is
 * refused with a message naming the loop and the rule before anything is compiled or run. The
 * program comes back unchanged.
 *
 * <p>What a GPU program is, in the loop IR (see {@link GpuKernel}): a kernel is an outermost
 * thread-bound loop; a loop bound to an axis inside a loop bound to the same axis is not a loop
 * but the same thread index; a loop with a smaller extent than its axis's launch extent runs on
 * the first threads only. A vthread loop runs as a serial loop on every thread (a later pass may
 * interleave it). The interpreter runs every thread-bound loop as a loop, one iteration after
 * another, which gives the same numbers exactly when these rules hold (and barriers sit where
 * {@link InjectBarriers} puts them).
 *
 * <p>The rules:
 * <ol>
 *   <li><b>store outside kernels</b>: every store is inside a thread-bound loop (host code only
 *       allocates and launches).
 *   <li><b>host loop</b>: no loop encloses a kernel; on a GPU it would run on the host.
 *   <li><b>parallel or vectorized</b>: no parallel or vectorized loop encloses a thread-bound loop,
 *       and no parallel loop is inside a kernel (bind it to a thread axis instead).
 *   <li><b>block inside thread</b>: blockIdx loops enclose the threadIdx and vthread loops.
 *   <li><b>constant extent</b>: block and thread loops have constant extents.
 *   <li><b>nested binding</b>: a threadIdx loop inside a loop bound to the same axis has at most
 *       the enclosing extent, and stores to shared memory only (a cooperative fetch: on a GPU
 *       each thread does its own part, which is all a shared buffer needs); blockIdx axes are not
 *       bound twice.
 *   <li><b>launch limits</b>: each launch extent is within CUDA's limit for its axis
 *       ({@link GpuKernel#maxExtent}), and the product of the threadIdx launch extents is at most
 *       {@link GpuLimits#maxThreadsPerBlock()}.
 *   <li><b>vthread extent</b>: a vthread loop's extent is at most {@link GpuLimits#maxVthreadExtent()}.
 *   <li><b>one writer per element</b>: a store to global or shared memory runs inside a loop bound
 *       to every threadIdx axis the kernel launches, and its indices use the variable of the
 *       innermost such loop (unless that loop has extent 1); a store to global memory likewise
 *       uses every blockIdx axis with a launch extent above 1. Otherwise several threads would
 *       write one element, and an update {@code C = C + x} would race: this refuses a reduction
 *       loop bound to threads (a cross-thread reduction, which Kiln does not lower yet).
 *   <li><b>barrier</b>: a barrier is inside a kernel, where every thread of the block reaches
 *       it: not under a condition, not in a loop that runs on part of the threads (a shorter
 *       thread loop or a nested binding), not in a vectorized loop.
 * </ol>
 */
public final class VerifyThreadBindings {
    private VerifyThreadBindings() {}

    public static PrimFunc apply(PrimFunc f, GpuLimits limits) {
        new Checker(f, limits).visit(f.body(), Ctx.HOST);
        return f;
    }

    /**
     * Where a statement sits: the loops and conditions around it that the rules care about.
     * {@code bound} has the outermost loop bound to each axis, {@code innermost} the innermost.
     */
    private record Ctx(
            GpuKernel kernel,
            For hostLoop,
            For vectorOrParallel,
            Map<ThreadAxis, For> bound,
            Map<ThreadAxis, For> innermost,
            For partial,
            For rebinding,
            IfThenElse condition) {
        static final Ctx HOST = new Ctx(null, null, null, Map.of(), Map.of(), null, null, null);

        Ctx withLoop(For f, GpuKernel k, boolean isPartial, boolean isRebinding) {
            Map<ThreadAxis, For> b = bound, in = innermost;
            if (f.kind() == ForKind.THREAD_BOUND) {
                b = new EnumMap<>(ThreadAxis.class);
                b.putAll(bound);
                b.putIfAbsent(f.thread(), f);
                in = new EnumMap<>(ThreadAxis.class);
                in.putAll(innermost);
                in.put(f.thread(), f);
            }
            boolean vec = f.kind() == ForKind.PARALLEL || f.kind() == ForKind.VECTORIZED;
            return new Ctx(
                    k,
                    k == null && !vec ? f : hostLoop,
                    vec && vectorOrParallel == null ? f : vectorOrParallel,
                    b,
                    in,
                    isPartial && partial == null ? f : partial,
                    isRebinding && rebinding == null ? f : rebinding,
                    condition);
        }

        Ctx withCondition(IfThenElse i) {
            return kernel == null || condition != null
                    ? this
                    : new Ctx(kernel, hostLoop, vectorOrParallel, bound, innermost, partial, rebinding, i);
        }
    }

    private static final class Checker {
        private final PrimFunc f;
        private final GpuLimits limits;

        Checker(PrimFunc f, GpuLimits limits) {
            this.f = f;
            this.limits = limits;
        }

        private KilnException fail(String msg) {
            return new KilnException("function '" + f.name() + "': " + msg);
        }

        void visit(Stmt s, Ctx ctx) {
            switch (s) {
                case For loop -> visitFor(loop, ctx);
                case Store st -> visitStore(st, ctx);
                case Allocate a -> visit(a.body(), ctx);
                case Seq q -> q.stmts().forEach(c -> visit(c, ctx));
                case IfThenElse i -> {
                    Ctx inner = ctx.withCondition(i);
                    visit(i.then(), inner);
                    if (i.otherwise() != null) visit(i.otherwise(), inner);
                }
                case Let l -> visit(l.body(), ctx);
                case Pragma p -> visit(p.body(), ctx);
                case Evaluate e -> {}
                case Barrier b -> visitBarrier(ctx);
            }
        }

        private void visitFor(For loop, Ctx ctx) {
            if (loop.kind() != ForKind.THREAD_BOUND) {
                if (loop.kind() == ForKind.PARALLEL && ctx.kernel() != null) {
                    throw fail("loop '" + loop.var().name() + "' is parallel inside "
                            + ctx.kernel().describe() + "; on a GPU bind it to a thread axis instead");
                }
                visit(loop.body(), ctx.withLoop(loop, ctx.kernel(), false, false));
                return;
            }
            ThreadAxis axis = loop.thread();
            String name = "loop '" + loop.var().name() + "' bound to " + axis.tag();
            if (ctx.vectorOrParallel() != null) {
                For v = ctx.vectorOrParallel();
                throw fail(v.kind().displayName() + " loop '" + v.var().name() + "' encloses " + name
                        + "; a parallel or vectorized loop cannot contain thread-bound loops");
            }
            GpuKernel kernel = ctx.kernel();
            if (kernel == null) {
                if (ctx.hostLoop() != null) {
                    For h = ctx.hostLoop();
                    throw fail(h.kind().displayName() + " loop '" + h.var().name() + "' encloses " + name
                            + ", the start of a kernel; a loop around a kernel would run on the host: fuse it into"
                            + " the blockIdx loop or bind it");
                }
                kernel = GpuKernel.of(loop);
                checkLaunch(kernel);
            }
            if (!(loop.extent() instanceof IntImm ext)) {
                throw fail(name + " has extent " + ExprPrinter.print(loop.extent()) + ", not a constant");
            }
            boolean rebinding = false;
            boolean partial = false;
            if (GpuKernel.isBlock(axis)) {
                for (ThreadAxis inner : new ThreadAxis[] {
                    ThreadAxis.THREAD_X, ThreadAxis.THREAD_Y, ThreadAxis.THREAD_Z, ThreadAxis.VTHREAD
                }) {
                    For t = ctx.bound().get(inner);
                    if (t != null) {
                        throw fail(name + " is inside loop '" + t.var().name() + "' bound to " + inner.tag()
                                + "; blockIdx loops must enclose the threadIdx and vthread loops");
                    }
                }
                For outer = ctx.bound().get(axis);
                if (outer != null) {
                    throw fail(name + " is inside loop '" + outer.var().name()
                            + "' bound to the same axis; a block axis" + " is bound once per kernel");
                }
                partial = ext.value() < kernel.extent(axis);
            } else if (axis == ThreadAxis.VTHREAD) {
                if (ext.value() > limits.maxVthreadExtent()) {
                    throw fail("vthread loop '" + loop.var().name() + "' has extent " + ext.value()
                            + ", more than the limit " + limits.maxVthreadExtent());
                }
            } else {
                For outer = ctx.innermost().get(axis);
                if (outer != null) {
                    rebinding = true;
                    long outerExt = ((IntImm) outer.extent()).value();
                    if (ext.value() > outerExt) {
                        throw fail(name + " has extent " + ext.value() + ", more than the enclosing loop '"
                                + outer.var().name() + "' bound to " + axis.tag() + " (" + outerExt
                                + "); inside it the loop means the same thread index, so it cannot be longer");
                    }
                }
                partial = ext.value() < kernel.extent(axis);
            }
            visit(loop.body(), ctx.withLoop(loop, kernel, partial, rebinding));
        }

        private void checkLaunch(GpuKernel k) {
            for (var e : k.extents().entrySet()) {
                if (e.getValue() > GpuKernel.maxExtent(e.getKey())) {
                    throw fail(k.describe() + " launches " + e.getValue() + " on "
                            + e.getKey().tag() + ", more than CUDA's limit " + GpuKernel.maxExtent(e.getKey())
                            + "; fuse it into another axis or split it");
                }
            }
            checkThreadsPerBlock(k);
        }

        private void checkThreadsPerBlock(GpuKernel k) {
            if (k.threadsPerBlock() > limits.maxThreadsPerBlock()) {
                StringBuilder axes = new StringBuilder();
                for (ThreadAxis a : new ThreadAxis[] {ThreadAxis.THREAD_X, ThreadAxis.THREAD_Y, ThreadAxis.THREAD_Z}) {
                    if (k.extents().containsKey(a))
                        axes.append(axes.isEmpty() ? "" : " x ")
                                .append(a.tag())
                                .append(' ')
                                .append(k.extent(a));
                }
                throw fail(k.describe() + " uses " + k.threadsPerBlock() + " threads per block (" + axes
                        + "), more than the limit " + limits.maxThreadsPerBlock());
            }
        }

        private void visitStore(Store st, Ctx ctx) {
            Buffer b = st.buffer();
            if (ctx.kernel() == null) {
                throw fail(
                        "the store to '" + b.name() + "' is outside every thread-bound loop, so no kernel would run it;"
                                + " bind its outer loops to blockIdx and threadIdx");
            }
            if (ctx.rebinding() != null && b.scope() != MemoryScope.SHARED) {
                For r = ctx.rebinding();
                For outer = ctx.bound().get(r.thread());
                throw fail("loop '" + r.var().name() + "' binds " + r.thread().tag() + " again inside loop '"
                        + outer.var().name()
                        + "', where it is the same thread index: only a cooperative fetch into shared memory may do "
                        + "that,"
                        + " but it stores to " + b.scope().displayName() + " buffer '" + b.name() + "'");
            }
            if (b.scope() == MemoryScope.LOCAL) return;
            List<ThreadAxis> axes =
                    new ArrayList<>(List.of(ThreadAxis.THREAD_X, ThreadAxis.THREAD_Y, ThreadAxis.THREAD_Z));
            if (b.scope() == MemoryScope.GLOBAL)
                axes.addAll(List.of(ThreadAxis.BLOCK_X, ThreadAxis.BLOCK_Y, ThreadAxis.BLOCK_Z));
            for (ThreadAxis a : axes) {
                long launched = ctx.kernel().extent(a);
                if (launched <= 1) continue;
                For loop = ctx.innermost().get(a);
                if (loop == null) {
                    throw fail("the store to " + b.scope().displayName() + " buffer '" + b.name()
                            + "' is outside every loop bound"
                            + " to " + a.tag() + " in " + ctx.kernel().describe() + ", which launches " + launched
                            + " of them, so each of them would run it; compute it inside a loop bound to " + a.tag()
                            + " (a reduction loop bound to threads would need a cross-thread reduction, which Kiln does"
                            + " not lower yet)");
                }
                if (loop.extent() instanceof IntImm e && e.value() == 1) continue;
                boolean uses = st.indices().stream().anyMatch(i -> Exprs.uses(i, loop.var()));
                if (!uses) {
                    throw fail("the store to " + b.scope().displayName() + " buffer '" + b.name() + "' inside loop '"
                            + loop.var().name() + "' bound to " + a.tag() + " does not depend on it, so all its threads"
                            + " would write the same element; a reduction loop bound to threads needs a cross-thread"
                            + " reduction, which Kiln does not lower yet (rfactor it, or bind spatial loops only)");
                }
            }
        }

        private void visitBarrier(Ctx ctx) {
            if (ctx.kernel() == null) throw fail("a barrier is outside every kernel");
            String where = null;
            if (ctx.condition() != null) {
                where = "under the condition "
                        + ExprPrinter.print(ctx.condition().cond());
            } else if (ctx.rebinding() != null) {
                where = "inside loop '" + ctx.rebinding().var().name() + "', which binds "
                        + ctx.rebinding().thread().tag() + " again and runs once per thread";
            } else if (ctx.partial() != null) {
                For p = ctx.partial();
                where = "inside loop '" + p.var().name() + "' bound to "
                        + p.thread().tag() + " with extent "
                        + ExprPrinter.print(p.extent()) + " while "
                        + ctx.kernel().describe() + " launches "
                        + ctx.kernel().extent(p.thread()) + " on that axis";
            } else if (ctx.vectorOrParallel() != null) {
                where = "inside " + ctx.vectorOrParallel().kind().displayName() + " loop '"
                        + ctx.vectorOrParallel().var().name() + "'";
            }
            if (where != null) {
                throw fail("a barrier is " + where + ": not every thread of the block would reach it");
            }
        }
    }
}
