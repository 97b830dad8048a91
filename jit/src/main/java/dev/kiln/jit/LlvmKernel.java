package dev.kiln.jit;

import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A handle on a function compiled by the LLVM backend. {@link #call} checks every argument
 * against its parameter (count, dtype, shape, strides, alignment, that it is still open, and
 * that no buffer the kernel writes overlaps another argument) and throws {@link KilnException}
 * naming the parameter before anything reaches native code ({@link KernelArgs}, shared with the
 * JVM backend); then it calls the machine code
 * through a Panama downcall with one {@code long} address per buffer ({@code invokeExact}, no
 * boxing). Closing the handle releases it; the code stays in the compile cache until evicted.
 */
public final class LlvmKernel implements CompiledKernel {
    private final CompiledCode code;
    private final KernelArgs checker;
    private volatile boolean closed;
    /** The last arguments that passed every check, and their addresses (NDArray's facts never change). */
    private volatile Checked lastChecked;

    private record Checked(NDArray[] arrays, long[] addresses) {}

    LlvmKernel(CompiledCode code) {
        this.code = code;
        this.checker = new KernelArgs(code.func, code.gen.written(), true);
    }

    @Override
    public void call(NDArray... args) {
        if (closed) throw new KilnException("kernel '" + code.func.name() + "' is closed");
        long[] addr = check(args);
        int status;
        try {
            status = invoke(addr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("calling kernel '" + code.func.name() + "' failed", t);
        }
        if (status != 0) throw failure(status);
    }

    /**
     * The addresses of {@code args} after checking them. An NDArray's dtype, shape, strides and
     * memory never change, so arguments identical to the last call's only need their liveness
     * re-checked.
     */
    private long[] check(NDArray[] args) {
        Checked last = lastChecked;
        if (last != null && args != null && args.length == last.arrays.length) {
            boolean same = true;
            for (int i = 0; i < args.length && same; i++) same = args[i] == last.arrays[i];
            if (same) {
                for (int i = 0; i < args.length; i++) {
                    if (!args[i].segment().scope().isAlive()) fullCheck(args); // throws naming the argument
                }
                return last.addresses;
            }
        }
        long[] addr = fullCheck(args);
        lastChecked = new Checked(args.clone(), addr);
        return addr;
    }

    private long[] fullCheck(NDArray[] args) {
        MemorySegment[] segs = checker.check(args);
        long[] addr = new long[segs.length];
        for (int i = 0; i < segs.length; i++) addr[i] = segs[i].address();
        return addr;
    }

    private int invoke(long[] a) throws Throwable {
        var h = code.entry;
        if (!code.direct) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment argv = arena.allocate(ValueLayout.JAVA_LONG, a.length);
                for (int i = 0; i < a.length; i++) argv.setAtIndex(ValueLayout.JAVA_LONG, i, a[i]);
                return (int) h.invokeExact(argv.address());
            }
        }
        return switch (a.length) {
            case 0 -> (int) h.invokeExact();
            case 1 -> (int) h.invokeExact(a[0]);
            case 2 -> (int) h.invokeExact(a[0], a[1]);
            case 3 -> (int) h.invokeExact(a[0], a[1], a[2]);
            case 4 -> (int) h.invokeExact(a[0], a[1], a[2], a[3]);
            case 5 -> (int) h.invokeExact(a[0], a[1], a[2], a[3], a[4]);
            case 6 -> (int) h.invokeExact(a[0], a[1], a[2], a[3], a[4], a[5]);
            case 7 -> (int) h.invokeExact(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
            case 8 -> (int) h.invokeExact(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
            default -> throw new IllegalStateException("direct call with " + a.length + " arguments");
        };
    }

    private KilnException failure(int status) {
        String fn = code.func.name();
        if (status == StmtGen.ALLOC_FAILED) {
            return new KilnException(
                    "kernel '" + fn + "' could not allocate a temporary buffer (out of native memory)");
        }
        if (status == StmtGen.RUNTIME_FAILED) {
            return new KilnException("kernel '" + fn + "': the parallel runtime failed (see the log for the cause)");
        }
        var sites = code.gen.divisionSites();
        if (status > 0 && status <= sites.size()) {
            return new KilnException(
                    "integer division by zero in " + sites.get(status - 1) + " in function '" + fn + "'");
        }
        return new KilnException("kernel '" + fn + "' returned unknown status " + status);
    }

    @Override
    public java.util.List<Long> heapTemporaries() {
        return code.gen.heapTemporaries();
    }

    /** The optimised LLVM IR and the assembly (emitted on first request). */
    @Override
    public String source() {
        return "; ---- optimised LLVM IR of '" + code.func.name() + "' for " + code.target + "\n"
                + code.module.optimizedIr() + "\n; ---- assembly\n" + code.assembly();
    }

    /** The LLVM IR as generated from the loop IR, before optimisation. */
    public String generatedIr() {
        return code.gen.ir();
    }

    /** The optimised LLVM IR. */
    public String optimizedIr() {
        return code.module.optimizedIr();
    }

    /** Remarks of code generation: loops generated differently from their annotation, and why. */
    public java.util.List<String> notes() {
        return code.gen.notes();
    }

    /** Milliseconds spent generating IR, parsing, optimising, generating machine code and linking it. */
    public String compileTimes() {
        CompileTimes t = code.module.times();
        return String.format(
                java.util.Locale.ROOT,
                "generate %.1f ms, parse %.1f ms, optimise %.1f ms, codegen %.1f ms, link %.1f ms",
                code.generateMs,
                t.parseMs(),
                t.optimizeMs(),
                t.codegenMs(),
                t.linkMs());
    }

    /** Whether calls skip the thread-state transition (small kernels without parallel loops). */
    public boolean criticalCalls() {
        return code.critical;
    }

    @Override
    public PrimFunc func() {
        return code.func;
    }

    CompiledCode code() {
        return code;
    }

    @Override
    public Target target() {
        return code.target;
    }

    @Override
    public void close() {
        if (closed) return;
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        code.release();
    }

    @Override
    public String toString() {
        return "LlvmKernel(" + code.func.name() + " for " + code.target + ")";
    }
}
