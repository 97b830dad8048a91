package dev.kiln.jit.jvm;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * A function compiled by the JVM backend. {@link #call} checks every argument against its
 * parameter (count, dtype, shape, strides, that it is still open and large enough, and that no
 * buffer the kernel writes overlaps another argument) and throws {@link KilnException} naming the
 * parameter before the generated code runs; then it passes the arguments' segments to the hidden
 * class. Closing the handle only makes later calls fail: the class stays in the compile cache
 * until evicted, and the JVM unloads it once nothing refers to it.
 */
public final class JvmKernel implements CompiledKernel {
    private final CompiledClass code;
    private final PrimFunc func;
    private final Buffer[] params;
    private final long[][] shapes;
    private final long[][] strides;
    private final long[] bytes;
    private volatile boolean closed;

    JvmKernel(CompiledClass code, PrimFunc func) {
        this.code = code;
        this.func = func;
        this.params = func.params().toArray(Buffer[]::new);
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
        if (closed) throw new KilnException("kernel '" + func.name() + "' is closed");
        MemorySegment[] segs = check(args);
        try {
            code.entry.run(segs);
        } catch (IndexOutOfBoundsException e) {
            throw new KilnException("kernel '" + func.name() + "' accessed memory outside a buffer: " + e.getMessage(), e);
        }
    }

    private MemorySegment[] check(NDArray[] args) {
        String fn = func.name();
        if (args == null || args.length != params.length) {
            throw new KilnException("kernel '" + fn + "' takes " + params.length + " argument(s) "
                    + Arrays.stream(params).map(Buffer::name).toList() + ", got " + (args == null ? 0 : args.length));
        }
        MemorySegment[] segs = new MemorySegment[args.length];
        for (int i = 0; i < args.length; i++) {
            NDArray a = args[i];
            Buffer p = params[i];
            String who = "kernel '" + fn + "' argument " + i + " (parameter '" + p.name() + "')";
            if (a == null) throw new KilnException(who + " is null");
            if (a.dtype() != p.dtype()) {
                throw new KilnException(who + " has dtype " + a.dtype() + ", expected " + p.dtype());
            }
            if (!Arrays.equals(a.shape(), shapes[i])) {
                throw new KilnException(who + " has shape " + Arrays.toString(a.shape()) + ", expected "
                        + Arrays.toString(shapes[i]));
            }
            if (!Arrays.equals(a.strides(), strides[i]) && a.numElements() > 0) {
                throw new KilnException(who + " has strides " + Arrays.toString(a.strides()) + ", but the kernel was "
                        + "compiled for strides " + Arrays.toString(strides[i]) + " (make a compact copy with copy())");
            }
            MemorySegment s = a.segment();
            if (!s.scope().isAlive()) throw new KilnException(who + " is closed");
            if (s.byteSize() < bytes[i]) {
                throw new KilnException(who + " holds " + s.byteSize() + " bytes, the kernel reads up to " + bytes[i]);
            }
            segs[i] = s;
        }
        for (int i = 0; i < args.length; i++) {
            if (!code.written[i] || bytes[i] == 0) continue;
            for (int j = 0; j < args.length; j++) {
                if (j == i || bytes[j] == 0) continue;
                if (overlap(segs[i], bytes[i], segs[j], bytes[j])) {
                    throw new KilnException("kernel '" + fn + "' argument " + i + " (parameter '" + params[i].name()
                            + "') overlaps argument " + j + " (parameter '" + params[j].name() + "'); the kernel writes '"
                            + params[i].name() + "' and needs it not to share memory with any other argument");
                }
            }
        }
        return segs;
    }

    private static boolean overlap(MemorySegment a, long na, MemorySegment b, long nb) {
        if (a.isNative() != b.isNative()) return false;
        if (!a.isNative() && a.heapBase().orElse(null) != b.heapBase().orElse(null)) return false;
        long x = a.address(), y = b.address();
        return x < y + nb && y < x + na;
    }

    /** The generated class as ASM's textifier prints it, after the notes of code generation. */
    @Override
    public String source() { return code.text(); }

    /** Remarks of code generation: loops generated differently from their annotation, and why. */
    public List<String> notes() { return code.notes; }

    /** The class file. */
    public byte[] classFile() { return code.bytes.clone(); }

    /** Milliseconds spent generating bytecode and defining the hidden class. */
    public String compileTimes() {
        return String.format(java.util.Locale.ROOT, "generate %.2f ms, define %.2f ms", code.generateMs, code.defineMs);
    }

    @Override
    public PrimFunc func() { return func; }

    @Override
    public Target target() { return code.target; }

    @Override
    public void close() { closed = true; }

    @Override
    public String toString() { return "JvmKernel(" + func.name() + " for " + code.target + ")"; }
}
