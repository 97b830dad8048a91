package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A handle on a function compiled by the LLVM backend. {@link #call} checks every argument
 * against its parameter (count, dtype, shape, strides, alignment, that it is still open, and
 * that no buffer the kernel writes overlaps another argument) and throws {@link KilnException}
 * naming the parameter before anything reaches native code; then it calls the machine code
 * through a Panama downcall with one {@code long} address per buffer ({@code invokeExact}, no
 * boxing). Closing the handle releases it; the code stays in the compile cache until evicted.
 */
public final class LlvmKernel implements CompiledKernel {
    private final CompiledCode code;
    private final Buffer[] params;
    private final long[][] shapes;
    private final long[][] strides;
    private final long[] bytes;
    private volatile boolean closed;
    /** The last arguments that passed every check, and their addresses (NDArray's facts never change). */
    private volatile Checked lastChecked;

    private record Checked(NDArray[] arrays, long[] addresses) {}

    LlvmKernel(CompiledCode code) {
        this.code = code;
        this.params = code.func.params().toArray(Buffer[]::new);
        this.shapes = new long[params.length][];
        this.strides = new long[params.length][];
        this.bytes = new long[params.length];
        for (int i = 0; i < params.length; i++) {
            shapes[i] = params[i].constShape();
            strides[i] = params[i].constStrides();
            bytes[i] = span(shapes[i], strides[i]) * params[i].dtype().bytes();
        }
    }

    private static long span(long[] shape, long[] strides) {
        long last = 0;
        for (int d = 0; d < shape.length; d++) {
            if (shape[d] == 0) return 0;
            last += (shape[d] - 1) * strides[d];
        }
        return last + 1;
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
        String fn = code.func.name();
        if (args == null || args.length != params.length) {
            throw new KilnException("kernel '" + fn + "' takes " + params.length + " argument(s) "
                    + Arrays.stream(params).map(Buffer::name).toList() + ", got " + (args == null ? 0 : args.length));
        }
        long[] addr = new long[args.length];
        for (int i = 0; i < args.length; i++) {
            NDArray a = args[i];
            Buffer p = params[i];
            if (a == null) throw new KilnException(who(i) + " is null");
            if (a.dtype() != p.dtype()) {
                throw new KilnException(who(i) + " has dtype " + a.dtype() + ", expected " + p.dtype());
            }
            if (!Arrays.equals(a.shape(), shapes[i])) {
                throw new KilnException(who(i) + " has shape " + Arrays.toString(a.shape()) + ", expected "
                        + Arrays.toString(shapes[i]));
            }
            if (!Arrays.equals(a.strides(), strides[i]) && a.numElements() > 0) {
                throw new KilnException(who(i) + " has strides " + Arrays.toString(a.strides()) + ", but the kernel was "
                        + "compiled for strides " + Arrays.toString(strides[i]) + " (make a compact copy with copy())");
            }
            MemorySegment s = a.segment();
            if (!s.scope().isAlive()) throw new KilnException(who(i) + " is closed");
            if (!s.isNative()) throw new KilnException(who(i) + " is not in native memory");
            if (s.address() % NDArray.ALIGNMENT != 0) {
                throw new KilnException(who(i) + " is not " + NDArray.ALIGNMENT + "-byte aligned (address 0x"
                        + Long.toHexString(s.address()) + ")");
            }
            if (s.byteSize() < bytes[i]) {
                throw new KilnException(who(i) + " holds " + s.byteSize() + " bytes, the kernel reads up to " + bytes[i]);
            }
            addr[i] = s.address();
        }
        boolean[] written = code.gen.written();
        for (int i = 0; i < args.length; i++) {
            if (!written[i] || bytes[i] == 0) continue;
            for (int j = 0; j < args.length; j++) {
                if (j == i || bytes[j] == 0) continue;
                if (addr[i] < addr[j] + bytes[j] && addr[j] < addr[i] + bytes[i]) {
                    throw new KilnException("kernel '" + fn + "' argument " + i + " (parameter '" + params[i].name()
                            + "') overlaps argument " + j + " (parameter '" + params[j].name() + "'); the kernel writes '"
                            + params[i].name() + "' and needs it not to share memory with any other argument");
                }
            }
        }
        return addr;
    }

    private String who(int i) {
        return "kernel '" + code.func.name() + "' argument " + i + " (parameter '" + params[i].name() + "')";
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
            return new KilnException("kernel '" + fn + "' could not allocate a temporary buffer (out of native memory)");
        }
        if (status == StmtGen.RUNTIME_FAILED) {
            return new KilnException("kernel '" + fn + "': the parallel runtime failed (see the log for the cause)");
        }
        var sites = code.gen.divisionSites();
        if (status > 0 && status <= sites.size()) {
            return new KilnException("integer division by zero in " + sites.get(status - 1) + " in function '" + fn + "'");
        }
        return new KilnException("kernel '" + fn + "' returned unknown status " + status);
    }

    /** The optimised LLVM IR and the assembly (emitted on first request). */
    @Override
    public String source() {
        return "; ---- optimised LLVM IR of '" + code.func.name() + "' for " + code.target + "\n" + code.module.optimizedIr()
                + "\n; ---- assembly\n" + code.assembly();
    }

    /** The LLVM IR as generated from the loop IR, before optimisation. */
    public String generatedIr() { return code.gen.ir(); }

    /** The optimised LLVM IR. */
    public String optimizedIr() { return code.module.optimizedIr(); }

    /** Remarks of code generation: loops generated differently from their annotation, and why. */
    public java.util.List<String> notes() { return code.gen.notes(); }

    /** Milliseconds spent generating IR, parsing, optimising and generating machine code. */
    public String compileTimes() {
        CompileTimes t = code.module.times();
        return String.format(java.util.Locale.ROOT, "generate %.1f ms, parse %.1f ms, optimise %.1f ms, codegen %.1f ms",
                code.generateMs, t.parseMs(), t.optimizeMs(), t.codegenMs());
    }

    /** Whether calls skip the thread-state transition (small kernels without parallel loops). */
    public boolean criticalCalls() { return code.critical; }

    @Override
    public PrimFunc func() { return code.func; }

    CompiledCode code() { return code; }

    @Override
    public Target target() { return code.target; }

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
    public String toString() { return "LlvmKernel(" + code.func.name() + " for " + code.target + ")"; }
}
