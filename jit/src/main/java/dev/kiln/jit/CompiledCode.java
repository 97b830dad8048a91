package dev.kiln.jit;

import dev.kiln.target.CpuTarget;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

/**
 * The machine code of one function, shared by every {@link LlvmKernel} handle the compile cache
 * gives out for it: the JIT module that owns the code, the downcall handles, and what code
 * generation learned (division sites, written parameters, work estimate). The cache owns it; it
 * is freed when evicted with no open handle, or when the backend's engine closes.
 */
final class CompiledCode {
    /** Kernels with at most this many parameters are called with one argument per buffer. */
    static final int MAX_DIRECT_ARGS = 8;
    /**
     * Kernels estimated below this many operations (and without parallel loops) are called
     * without the thread-state transition ({@link Linker.Option#critical}): they finish in
     * microseconds, so holding off a safepoint is harmless, and the call costs several ns less.
     */
    static final long CRITICAL_WORK = 50_000;

    final PrimFunc func;
    final CpuTarget target;
    final JitOptions options;
    final KernelGen.Result gen;
    final JitModule module;
    final MethodHandle entry;
    final boolean direct;
    final boolean critical;
    final double generateMs;
    private int handles;
    private boolean freed;
    private String assembly;

    CompiledCode(
            PrimFunc func,
            CpuTarget target,
            JitOptions options,
            KernelGen.Result gen,
            JitModule module,
            double generateMs) {
        this.func = func;
        this.target = target;
        this.options = options;
        this.gen = gen;
        this.module = module;
        this.generateMs = generateMs;
        int n = func.params().size();
        this.direct = n <= MAX_DIRECT_ARGS;
        this.critical = !gen.parallel() && gen.work() < CRITICAL_WORK;
        MemoryLayout[] args = new MemoryLayout[direct ? n : 1];
        Arrays.fill(args, ValueLayout.JAVA_LONG);
        FunctionDescriptor d = FunctionDescriptor.of(ValueLayout.JAVA_INT, args);
        long addr = module.address(direct ? gen.symbol() : gen.packedSymbol());
        Linker.Option[] opts = critical ? new Linker.Option[] {Linker.Option.critical(false)} : new Linker.Option[0];
        this.entry = Linker.nativeLinker().downcallHandle(MemorySegment.ofAddress(addr), d, opts);
    }

    synchronized boolean acquire() {
        if (freed) return false;
        handles++;
        return true;
    }

    synchronized void release() {
        handles--;
    }

    synchronized boolean inUse() {
        return handles > 0;
    }

    /** Frees the code; the cache calls this only when no handle is open. */
    synchronized void free() {
        if (freed) return;
        freed = true;
        module.close();
    }

    /** The assembly, emitted on first request (a second code generation, for reading only). */
    synchronized String assembly() {
        if (assembly == null) assembly = module.jit().assembly(func.name(), module.optimizedIr());
        return assembly;
    }
}
