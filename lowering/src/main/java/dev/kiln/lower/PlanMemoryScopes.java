package dev.kiln.lower;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
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
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts every GPU buffer where its memory scope says it lives, or refuses the program:
 * <ul>
 *   <li>A <b>shared</b> buffer is one per block: it is allocated inside the kernel's blockIdx
 *       loops and outside its threadIdx and vthread loops. Lowering places a cache-read stage's
 *       buffer at its compute_at loop, usually inside the threadIdx loop; the allocation moves out
 *       to just around the outermost threadIdx or vthread loop that encloses it. That is only
 *       sound when every thread fills the buffer with the same data, so a store whose index,
 *       value or condition depends on an enclosing threadIdx loop is refused (bound inference
 *       gives shared stages the whole block's region, so a schedule made of steps passes).
 *   <li>A <b>local</b> buffer is one per thread: in a kernel with threadIdx loops it is allocated
 *       inside one.
 *   <li>A <b>global</b> buffer is allocated by the host, outside every kernel.
 *   <li>The shared buffers of a kernel fit in {@link GpuLimits#sharedMemoryPerBlock()} bytes.
 * </ul>
 * Every message names the buffer and the kernel. A program without misplaced buffers comes back
 * as the same object.
 */
public final class PlanMemoryScopes {
    private PlanMemoryScopes() {}

    public static PrimFunc apply(PrimFunc f, GpuLimits limits) {
        Planner p = new Planner(f);
        PrimFunc out = f.withBody(p.host(f.body()));
        for (GpuKernel k : GpuKernel.find(out.body())) checkSharedMemory(f, k, limits);
        return out;
    }

    /** The bytes a buffer of constant shape and strides occupies (its span, padding included). */
    static long bytes(Buffer b) {
        long span = 1;
        for (int d = 0; d < b.rank(); d++) {
            if (!(b.shape().get(d) instanceof IntImm n) || !(b.strides().get(d) instanceof IntImm s)) {
                throw new KilnException("buffer '" + b.name() + "' has a shape or strides that are not constant");
            }
            span = Math.addExact(span, Math.multiplyExact(n.value() - 1, s.value()));
        }
        return Math.multiplyExact(span, b.dtype().bytes());
    }

    private static void checkSharedMemory(PrimFunc f, GpuKernel k, GpuLimits limits) {
        List<Buffer> shared = new ArrayList<>();
        collectShared(k.root(), shared);
        long total = 0;
        StringBuilder parts = new StringBuilder();
        for (Buffer b : shared) {
            long n = bytes(b);
            total = Math.addExact(total, n);
            parts.append(parts.isEmpty() ? "" : ", ")
                    .append(b.name())
                    .append(' ')
                    .append(n);
        }
        if (total > limits.sharedMemoryPerBlock()) {
            throw new KilnException("function '" + f.name() + "': " + k.describe() + " needs " + total
                    + " bytes of shared memory per block (" + parts + "), more than the limit "
                    + limits.sharedMemoryPerBlock());
        }
    }

    private static void collectShared(Stmt s, List<Buffer> out) {
        Stmts.forEachStmt(s, x -> {
            if (x instanceof Allocate a && a.buffer().scope() == MemoryScope.SHARED) out.add(a.buffer());
        });
    }

    /** Where a statement sits inside a kernel. */
    private record Ctx(GpuKernel kernel, For outermostThreadLoop, List<For> threadIdxLoops, List<Allocate> hoisted) {
        Ctx enter(For f) {
            if (f.kind() != ForKind.THREAD_BOUND || GpuKernel.isBlock(f.thread())) return this;
            List<For> t = threadIdxLoops;
            if (f.thread() != ThreadAxis.VTHREAD) {
                t = new ArrayList<>(threadIdxLoops);
                t.add(f);
            }
            return new Ctx(kernel, outermostThreadLoop, t, hoisted);
        }
    }

    private static final class Planner {
        private final PrimFunc f;

        Planner(PrimFunc f) {
            this.f = f;
        }

        private KilnException fail(String msg) {
            return new KilnException("function '" + f.name() + "': " + msg);
        }

        /** Host code: outside every kernel. */
        Stmt host(Stmt s) {
            return new StmtRewriter() {
                @Override
                public Stmt visit(Stmt x) {
                    if (x instanceof For loop && loop.kind() == ForKind.THREAD_BOUND) {
                        return kernelLoop(loop, new Ctx(GpuKernel.of(loop), null, List.of(), null));
                    }
                    if (x instanceof Allocate a && a.buffer().scope() != MemoryScope.GLOBAL) {
                        throw fail(a.buffer().scope().displayName() + " buffer '"
                                + a.buffer().name()
                                + "' is allocated outside every kernel; compute it at a loop inside a kernel");
                    }
                    return rewriteChildren(x);
                }
            }.visit(s);
        }

        private Stmt kernelLoop(For loop, Ctx ctx) {
            boolean target = loop.kind() == ForKind.THREAD_BOUND
                    && !GpuKernel.isBlock(loop.thread())
                    && ctx.outermostThreadLoop() == null;
            if (!target) return loop.withBody(inKernel(loop.body(), ctx.enter(loop)));
            List<Allocate> hoisted = new ArrayList<>();
            Ctx inner = new Ctx(ctx.kernel(), loop, List.of(), hoisted).enter(loop);
            Stmt out = loop.withBody(inKernel(loop.body(), inner));
            if (!hoisted.isEmpty() && loop == ctx.kernel().root()) {
                throw fail("shared buffer '" + hoisted.getFirst().buffer().name() + "' is in "
                        + ctx.kernel().describe()
                        + ", which has no blockIdx loop around its "
                        + loop.thread().tag()
                        + " loop to allocate it in; bind an outer loop to blockIdx.x (extent 1 is fine)");
            }
            for (int k = hoisted.size() - 1; k >= 0; k--)
                out = new Allocate(hoisted.get(k).buffer(), out);
            return out;
        }

        /** Inside a kernel. */
        private Stmt inKernel(Stmt s, Ctx ctx) {
            return new StmtRewriter() {
                @Override
                public Stmt visit(Stmt x) {
                    return switch (x) {
                        case For loop -> kernelLoop(loop, ctx);
                        case Allocate a -> allocate(a, ctx);
                        default -> rewriteChildren(x);
                    };
                }
            }.visit(s);
        }

        private Stmt allocate(Allocate a, Ctx ctx) {
            Buffer b = a.buffer();
            if (b.scope() == MemoryScope.SHARED && ctx.outermostThreadLoop() != null) {
                checkSameForAllThreads(a, ctx.threadIdxLoops());
                ctx.hoisted().add(a);
                return inKernel(a.body(), ctx);
            }
            Stmt body = inKernel(a.body(), ctx);
            switch (b.scope()) {
                case GLOBAL ->
                    throw fail("global buffer '" + b.name() + "' is allocated inside "
                            + ctx.kernel().describe()
                            + "; compute it at root (in its own kernel), inline it, or cache it in shared or "
                            + "local memory");
                case LOCAL -> {
                    if (ctx.kernel().hasThreads() && ctx.threadIdxLoops().isEmpty()) {
                        throw fail("local buffer '" + b.name() + "' is allocated outside the threadIdx loops of "
                                + ctx.kernel().describe()
                                + ", but each thread has its own local memory; compute it at a"
                                + " loop inside the threadIdx loop");
                    }
                }
                case SHARED -> {}
            }
            return body == a.body() ? a : new Allocate(b, body);
        }

        /** Refuses a shared buffer whose stores depend on the threadIdx loops around its allocation. */
        private void checkSameForAllThreads(Allocate a, List<For> threadLoops) {
            Map<Var, For> origin = new IdentityHashMap<>();
            for (For t : threadLoops) origin.put(t.var(), t);
            taint(a.body(), a.buffer(), origin, null);
        }

        private void taint(Stmt s, Buffer b, Map<Var, For> origin, For guardOrigin) {
            switch (s) {
                case For loop -> {
                    For o = firstUse(origin, loop.min(), loop.extent());
                    Map<Var, For> m = origin;
                    if (o != null) {
                        m = new IdentityHashMap<>(origin);
                        m.put(loop.var(), o);
                    }
                    taint(loop.body(), b, m, guardOrigin);
                }
                case Let l -> {
                    For o = firstUse(origin, l.value());
                    Map<Var, For> m = origin;
                    if (o != null) {
                        m = new IdentityHashMap<>(origin);
                        m.put(l.var(), o);
                    }
                    taint(l.body(), b, m, guardOrigin);
                }
                case IfThenElse i -> {
                    For o = guardOrigin != null ? guardOrigin : firstUse(origin, i.cond());
                    taint(i.then(), b, origin, o);
                    if (i.otherwise() != null) taint(i.otherwise(), b, origin, o);
                }
                case Store st -> {
                    if (st.buffer() != b) return;
                    List<Expr> used = new ArrayList<>(st.indices());
                    used.add(st.value());
                    For o = firstUse(origin, used.toArray(Expr[]::new));
                    if (o == null) o = guardOrigin;
                    if (o != null) {
                        throw fail("shared buffer '" + b.name()
                                + "' would hold different data for each thread: its store"
                                + " depends on loop '" + o.var().name() + "' bound to "
                                + o.thread().tag()
                                + ", which encloses its allocation, so the threads of a block would " + "overwrite each"
                                + " other's data; compute the stage outside the threadIdx loops or cache it "
                                + "in local memory");
                    }
                }
                case Allocate al -> taint(al.body(), b, origin, guardOrigin);
                case Seq q -> q.stmts().forEach(c -> taint(c, b, origin, guardOrigin));
                case Pragma p -> taint(p.body(), b, origin, guardOrigin);
                case Evaluate e -> {}
                case Barrier br -> {}
            }
        }

        private static For firstUse(Map<Var, For> origin, Expr... exprs) {
            For[] found = new For[1];
            for (Expr e : exprs) {
                Exprs.forEach(e, x -> {
                    if (found[0] == null && x instanceof Var v && origin.containsKey(v)) found[0] = origin.get(v);
                });
            }
            return found[0];
        }
    }
}
