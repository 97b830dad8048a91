package dev.kiln.lower;

import dev.kiln.ir.IntImm;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One kernel of a GPU program and its launch configuration. In the loop IR a kernel is an
 * outermost {@link ForKind#THREAD_BOUND} loop: what runs outside kernels is host code. The
 * launch extent of a block or thread axis is the largest extent of the loops bound to it in the
 * kernel; a loop bound to it with a smaller extent runs on the first threads only (a backend
 * guards it with {@code threadIdx.x < extent}). A loop bound to an axis inside another loop bound
 * to the same axis does not loop: its variable is that same thread index (TVM's rule), which is
 * how a cooperative fetch spreads over the block's threads. vthread loops are not launch axes.
 *
 * @param root    the kernel's outermost loop
 * @param extents the launch extent of every block and thread axis the kernel uses (constant extents only)
 */
public record GpuKernel(For root, Map<ThreadAxis, Long> extents) {
    public GpuKernel {
        java.util.Objects.requireNonNull(root, "root");
        Map<ThreadAxis, Long> copy = new EnumMap<>(ThreadAxis.class);
        copy.putAll(extents);
        extents = Collections.unmodifiableMap(copy);
    }

    /** The kernels of a program body, outermost thread-bound loops in program order. */
    public static List<GpuKernel> find(Stmt body) {
        List<GpuKernel> out = new ArrayList<>();
        collect(body, out);
        return out;
    }

    /** The kernel whose outermost loop is {@code root}. */
    public static GpuKernel of(For root) {
        Map<ThreadAxis, Long> ext = new EnumMap<>(ThreadAxis.class);
        extents(root, ext);
        return new GpuKernel(root, ext);
    }

    /**
     * The largest launch extent CUDA allows on an axis (every NVIDIA GPU since compute capability
     * 3.0): 2^31 - 1 blocks on x and 65535 on y and z; 1024 threads on x and y and 64 on z (the
     * product of the thread extents has its own, per-device limit).
     */
    public static long maxExtent(ThreadAxis axis) {
        return switch (axis) {
            case BLOCK_X -> Integer.MAX_VALUE;
            case BLOCK_Y, BLOCK_Z -> 65535;
            case THREAD_X, THREAD_Y -> 1024;
            case THREAD_Z -> 64;
            case VTHREAD -> Long.MAX_VALUE;
        };
    }

    /** The launch extent of an axis: 1 when the kernel does not use it. */
    public long extent(ThreadAxis axis) {
        return extents.getOrDefault(axis, 1L);
    }

    /** Threads per block: the product of the threadIdx launch extents. */
    public long threadsPerBlock() {
        return extent(ThreadAxis.THREAD_X) * extent(ThreadAxis.THREAD_Y) * extent(ThreadAxis.THREAD_Z);
    }

    /** Blocks in the grid: the product of the blockIdx launch extents. */
    public long blocks() {
        return extent(ThreadAxis.BLOCK_X) * extent(ThreadAxis.BLOCK_Y) * extent(ThreadAxis.BLOCK_Z);
    }

    /** Whether the kernel has any loop bound to threadIdx.x, .y or .z. */
    public boolean hasThreads() {
        return extents.containsKey(ThreadAxis.THREAD_X)
                || extents.containsKey(ThreadAxis.THREAD_Y)
                || extents.containsKey(ThreadAxis.THREAD_Z);
    }

    /** The name of the kernel in messages: its outermost loop and axis. */
    public String describe() {
        return "kernel '" + root.var().name() + "' (" + root.thread().tag() + ")";
    }

    static boolean isBlock(ThreadAxis a) {
        return a == ThreadAxis.BLOCK_X || a == ThreadAxis.BLOCK_Y || a == ThreadAxis.BLOCK_Z;
    }

    private static void collect(Stmt s, List<GpuKernel> out) {
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                if (x instanceof For f && f.kind() == ForKind.THREAD_BOUND) out.add(of(f));
                else visitChildren(x);
            }
        }.visit(s);
    }

    private static void extents(Stmt s, Map<ThreadAxis, Long> ext) {
        Stmts.forEachStmt(s, x -> {
            if (x instanceof For f
                    && f.kind() == ForKind.THREAD_BOUND
                    && f.thread() != ThreadAxis.VTHREAD
                    && f.extent() instanceof IntImm c) {
                ext.merge(f.thread(), c.value(), Math::max);
            }
        });
    }
}
