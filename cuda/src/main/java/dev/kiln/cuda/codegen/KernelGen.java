package dev.kiln.cuda.codegen;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.GpuKernel;
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
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.List;

/**
 * The body of one {@code __global__} function: the statements of a kernel (an outermost
 * thread-bound loop, see {@link GpuKernel}) as CUDA C.
 * <ul>
 *   <li>A loop bound to a block or thread axis is not a loop: its variable is the axis's index
 *       (plus the loop's min). When its extent is smaller than the kernel's launch extent on that
 *       axis, its body runs under {@code if (threadIdx.x < extent)}. A loop bound to an axis
 *       inside a loop bound to the same axis is the same index again (a cooperative fetch).
 *   <li>vthread loops and serial loops are C loops; unrolled loops get {@code #pragma unroll};
 *       vectorized loops become {@code float2}/{@code float4} accesses where {@link VectorAccess}
 *       proves them aligned and contiguous, and unrolled loops otherwise.
 *   <li>Shared buffers are {@code __shared__} arrays (32-byte aligned, as Tensor Core fragments
 *       need), local buffers arrays of the thread;
 *       {@link dev.kiln.tir.Barrier} is {@code __syncthreads()}.
 *   <li>Local arrays start zeroed, like the interpreter's scratch memory (the compiler drops the
 *       clearing when the program writes before it reads); shared arrays are cleared by all
 *       threads followed by a barrier only with {@link CudaOptions#zeroSharedMemory()}, since the
 *       lowering never reads a shared element it did not fetch.
 *   <li>A Tensor Core nest is {@link WmmaGen}'s; its kernel runs a warp per program thread, its
 *       accumulators stay in fragment registers across the reduction loops where they can, and the
 *       lanes of a warp share the iterations of its copies into shared memory.
 * </ul>
 */
final class KernelGen {
    private final String funcName;
    private final GpuKernel kernel;
    private final ExprGen g;
    private final CudaNames names;
    private final CudaOptions options;
    private final StringBuilder out = new StringBuilder();
    /** The names declared in each open C block, innermost last: a let opens a block only to avoid a clash. */
    private final java.util.ArrayDeque<java.util.Set<String>> scopes = new java.util.ArrayDeque<>();

    private int depth = 1;
    /** How many threadIdx or vthread loops enclose the current statement. */
    private int threadLoops;

    KernelGen(String funcName, GpuKernel kernel, ExprGen g, CudaNames names, CudaOptions options) {
        this.funcName = funcName;
        this.kernel = kernel;
        this.g = g;
        this.names = names;
        this.options = options;
        this.warpLevel = WmmaGen.warpLevel(kernel);
        if (warpLevel) WmmaGen.checkWarpLevel(kernel, where());
    }

    /** Whether every program thread along x is a warp ({@link WmmaGen}). */
    private final boolean warpLevel;
    /** The Tensor Core accumulators kept in fragments across the loop being written, or null. */
    private WmmaAccumulators accumulators;
    /** Whether the statement being written is inside a loop whose iterations the lanes share. */
    private boolean lanesSplit;

    /** The kernel's body, indented one level. */
    String body() {
        scopes.push(new java.util.HashSet<>());
        stmt(kernel.root());
        return out.toString();
    }

    private void line(String s) {
        out.append("  ".repeat(depth)).append(s).append('\n');
    }

    private KilnException fail(String msg) {
        return new KilnException("function '" + funcName + "', " + kernel.describe() + ": " + msg);
    }

    private void stmt(Stmt s) {
        switch (s) {
            case For f -> loop(f);
            case Store st ->
                line(names.buffer(st.buffer()) + "[" + g.offset(st.buffer(), st.indices()) + "] = " + g.gen(st.value())
                        + ";");
            case Allocate a -> allocate(a);
            case Seq q -> seq(q);
            case IfThenElse i -> {
                open("if (" + g.gen(i.cond()) + ")");
                stmt(i.then());
                if (i.otherwise() != null) {
                    close();
                    open("else");
                    stmt(i.otherwise());
                }
                close();
            }
            case Let l -> {
                // unrolled copies reuse a let's variable: a second declaration in one block gets its own block
                String v = names.var(l.var());
                boolean clash = scopes.peek().contains(v);
                if (clash) open("");
                g.dtypes.add(l.var().dtype());
                line("const " + CudaTypes.name(l.var().dtype()) + " " + v + " = " + g.gen(l.value()) + ";");
                scopes.peek().add(v);
                stmt(l.body());
                if (clash) close();
            }
            case Evaluate e -> line("(void)" + g.gen(e.value()) + ";");
            case Pragma p
            when p.tensorIntrinsic() != null -> WmmaGen.emit(p, accumulators, g, names, where(), this::line);
            case Pragma p -> {
                line("// pragma " + p.key() + " = " + p.value());
                stmt(p.body());
            }
            case Barrier b -> line("__syncthreads();");
        }
    }

    /** Opens a C block after {@code header} (none for a bare block). */
    private void open(String header) {
        line(header.isEmpty() ? "{" : header + " {");
        depth++;
        scopes.push(new java.util.HashSet<>());
    }

    private void close() {
        depth--;
        scopes.pop();
        line("}");
    }

    /**
     * A sequence; in a warp-level kernel, a run of two or more Tensor Core nests in it (the copies
     * that unrolling a reduction made) keeps its accumulators in fragments across the run where
     * {@link WmmaAccumulators#across(List, String)} allows.
     */
    private void seq(Seq q) {
        List<Stmt> xs = q.stmts();
        int i = 0;
        while (i < xs.size()) {
            int j = i;
            if (warpLevel && accumulators == null) {
                while (j < xs.size() && xs.get(j) instanceof Pragma p && p.tensorIntrinsic() != null) j++;
            }
            WmmaAccumulators acc = j - i >= 2 ? WmmaAccumulators.across(xs.subList(i, j), where()) : null;
            if (acc == null) {
                if (warpLevel && accumulators == null && i + 1 < xs.size() && xs.get(i + 1) instanceof For f) {
                    // the reduction's zeroing of C, then its loop: the fragments start as zeros instead
                    WmmaAccumulators next = WmmaAccumulators.across(f, where());
                    if (next != null && next.zeroedBy(xs.get(i))) {
                        line("// C's zeroing is the fragments' fill below");
                        accumulate(f, next, true);
                        i += 2;
                        continue;
                    }
                }
                stmt(xs.get(i++));
                continue;
            }
            open("");
            acc.load(g, names, this::line, false);
            accumulators = acc;
            for (int k = i; k < j; k++) stmt(xs.get(k));
            accumulators = null;
            acc.store(g, names, this::line);
            close();
            i = j;
        }
    }

    private String where() {
        return "function '" + funcName + "', " + kernel.describe();
    }

    /**
     * A loop; in a warp-level kernel, the outermost one across which a Tensor Core nest's
     * accumulators can stay in fragments ({@link WmmaAccumulators#across(For, String)}) is wrapped in their loads
     * and stores, and the loops that pick a fragment are unrolled (so its index is a constant).
     */
    private void loop(For f) {
        if (!warpLevel || accumulators != null) {
            loopAsIs(f);
            return;
        }
        WmmaAccumulators acc = WmmaAccumulators.across(f, where());
        if (acc == null) {
            loopAsIs(f);
            return;
        }
        accumulate(f, acc, false);
    }

    /** Loop {@code f} with {@code acc} in fragments across it: loaded (or zeroed) before it and stored after it. */
    private void accumulate(For f, WmmaAccumulators acc, boolean zeros) {
        open("");
        acc.load(g, names, this::line, zeros);
        accumulators = acc;
        loopAsIs(f);
        accumulators = null;
        acc.store(g, names, this::line);
        if (acc.inSharedMemory() && containsBarrier(f.body())) {
            // in the program each step's write to the shared tile came before the loop's barriers; the
            // fragments' store after the loop must be followed by one too (every thread reaches the loop,
            // since it holds a barrier)
            line("__syncthreads();");
        }
        close();
    }

    private static boolean containsBarrier(Stmt s) {
        boolean[] found = {false};
        Stmts.forEachStmt(s, x -> found[0] |= x instanceof Barrier);
        return found[0];
    }

    private void loopAsIs(For f) {
        String v = names.var(f.var());
        String type = CudaTypes.name(f.var().dtype());
        switch (f.kind()) {
            case THREAD_BOUND -> {
                if (f.thread() != ThreadAxis.VTHREAD) {
                    threadLoop(f, v, type);
                    return;
                }
                line("// vthread " + f.var().name());
            }
            case PARALLEL -> throw fail("loop '" + f.var().name() + "' is parallel; on a GPU bind it to a thread axis");
            case VECTORIZED -> {
                if (options.vectorize() && VectorAccess.tryEmit(f, g, names, this::line)) return;
                line("#pragma unroll");
            }
            case UNROLLED -> {
                if (laneSplit(f)) return;
                line("#pragma unroll");
            }
            case SERIAL -> {
                if (laneSplit(f)) return;
                if (accumulators != null && accumulators.fragmentLoop(f)) line("#pragma unroll");
            }
        }
        String min = g.index(f.min());
        String end;
        if (f.min() instanceof IntImm m && f.extent() instanceof IntImm e) {
            end = CudaTypes.literal(new IntImm(f.var().dtype(), Math.addExact(m.value(), e.value())));
        } else if (f.min() instanceof IntImm m && m.value() == 0) {
            end = g.index(f.extent());
        } else {
            end = "(" + min + " + " + g.index(f.extent()) + ")";
        }
        open("for (" + type + " " + v + " = " + min + "; " + v + " < " + end + "; ++" + v + ")");
        scopes.peek().add(v);
        boolean vthread = f.kind() == ForKind.THREAD_BOUND;
        if (vthread) threadLoops++;
        stmt(f.body());
        if (vthread) threadLoops--;
        close();
    }

    /**
     * In a warp-level kernel, writes a loop whose iterations the lanes can share ({@link
     * WmmaGen#laneSplit}) as {@code for (v = min + lane; v < end; v += 32)} followed by a
     * {@code __syncwarp()}; returns false (and writes nothing) for any other loop.
     */
    private boolean laneSplit(For f) {
        if (!warpLevel || lanesSplit || threadLoops == 0 || !WmmaGen.laneSplit(f)) return false;
        String v = names.var(f.var());
        String type = CudaTypes.name(f.var().dtype());
        String min = g.index(f.min());
        String end = f.min() instanceof IntImm m && m.value() == 0
                ? g.index(f.extent())
                : "(" + min + " + " + g.index(f.extent()) + ")";
        String first = f.min() instanceof IntImm m && m.value() == 0
                ? "(" + type + ")(threadIdx.x & 31)"
                : "(" + min + " + (" + type + ")(threadIdx.x & 31))";
        line("// the warp's " + WmmaGen.LANES + " lanes share loop '" + f.var().name() + "'");
        open("for (" + type + " " + v + " = " + first + "; " + v + " < " + end + "; " + v + " += " + WmmaGen.LANES
                + ")");
        scopes.peek().add(v);
        lanesSplit = true;
        stmt(f.body());
        lanesSplit = false;
        close();
        line("__syncwarp();");
        return true;
    }

    private void threadLoop(For f, String v, String type) {
        ThreadAxis axis = f.thread();
        if (!(f.extent() instanceof IntImm ext)) {
            throw fail("loop '" + f.var().name() + "' bound to " + axis.tag() + " has a non-constant extent");
        }
        long launched = kernel.extent(axis);
        String index = warpLevel && axis == ThreadAxis.THREAD_X ? "(threadIdx.x >> 5)" : axis.tag();
        String value = "(" + type + ")" + index;
        if (!(f.min() instanceof IntImm m && m.value() == 0)) value = value + " + " + g.index(f.min());
        open(ext.value() < launched ? "if (" + index + " < " + ext.value() + ")" : "");
        line("const " + type + " " + v + " = " + value + ";");
        scopes.peek().add(v);
        boolean thread = axis != ThreadAxis.BLOCK_X && axis != ThreadAxis.BLOCK_Y && axis != ThreadAxis.BLOCK_Z;
        if (thread) threadLoops++;
        stmt(f.body());
        if (thread) threadLoops--;
        close();
    }

    private void allocate(Allocate a) {
        Buffer b = a.buffer();
        String name = names.buffer(b);
        String type = CudaTypes.name(b.dtype());
        g.dtypes.add(b.dtype());
        long n = b.flatView().shape().getFirst() instanceof IntImm c ? c.value() : -1;
        boolean clash = scopes.peek().contains(name);
        if (clash) open("");
        scopes.peek().add(name);
        switch (b.scope()) {
            case GLOBAL ->
                throw fail("global buffer '" + b.name() + "' is allocated inside the kernel; the GPU passes"
                        + " (plan-memory-scopes) refuse this, so run them before code generation");
            case LOCAL -> line(type + " " + name + "[" + n + "] = {};");
            case SHARED -> {
                if (threadLoops > 0) {
                    throw fail("shared buffer '" + b.name()
                            + "' is allocated inside a thread loop, where every thread would"
                            + " share it without synchronisation; lower the program with the GPU passes"
                            + " (GpuPasses.lower: plan-memory-scopes hoists it to the block, inject-barriers "
                            + "synchronises it)");
                }
                line("__shared__ __align__(32) " + type + " " + name + "[" + n + "];");
                if (options.zeroSharedMemory()) {
                    long threads = kernel.threadsPerBlock();
                    String tid = "(int)(threadIdx.x + " + kernel.extent(ThreadAxis.THREAD_X) + " * (threadIdx.y + "
                            + kernel.extent(ThreadAxis.THREAD_Y) + " * threadIdx.z))";
                    line("for (int kiln_z = " + tid + "; kiln_z < " + n + "; kiln_z += " + threads + ") " + name
                            + "[kiln_z] = " + CudaTypes.zero(b.dtype()) + ";");
                    line("__syncthreads();");
                }
            }
        }
        stmt(a.body());
        if (clash) close();
    }
}
