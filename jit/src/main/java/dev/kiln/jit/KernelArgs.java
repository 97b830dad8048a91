package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The argument check every CPU kernel handle ({@link LlvmKernel}, {@code jvm.JvmKernel}) runs before
 * its code: the count, and for each argument its dtype, shape, strides, that it is still open and
 * holds every byte the kernel may touch, and that no buffer the kernel writes overlaps another
 * argument. Native code also needs each argument in native memory, {@link NDArray#ALIGNMENT}-byte
 * aligned ({@code nativeOnly}). Every failure is a {@link KilnException} naming the function, the
 * argument's position and its parameter.
 */
public final class KernelArgs {
    private final String fn;
    private final Buffer[] params;
    private final long[][] shapes;
    private final long[][] strides;
    private final long[] bytes;
    private final boolean[] written;
    private final boolean nativeOnly;

    /**
     * @param written    per parameter, whether the kernel stores into it
     * @param nativeOnly whether every argument must live in aligned native memory
     */
    public KernelArgs(PrimFunc func, boolean[] written, boolean nativeOnly) {
        this.fn = func.name();
        this.params = func.params().toArray(Buffer[]::new);
        if (written.length != params.length) {
            throw new KilnException(
                    "kernel '" + fn + "': " + written.length + " written flags for " + params.length + " parameters");
        }
        this.written = written.clone();
        this.nativeOnly = nativeOnly;
        this.shapes = new long[params.length][];
        this.strides = new long[params.length][];
        this.bytes = new long[params.length];
        for (int i = 0; i < params.length; i++) {
            shapes[i] = params[i].constShape();
            strides[i] = params[i].constStrides();
            bytes[i] = span(shapes[i], strides[i]) * params[i].dtype().bytes();
        }
    }

    /** Elements from the first to one past the last an array of this shape and strides reaches. */
    private static long span(long[] shape, long[] strides) {
        long last = 0;
        for (int d = 0; d < shape.length; d++) {
            if (shape[d] == 0) return 0;
            last += (shape[d] - 1) * strides[d];
        }
        return last + 1;
    }

    /** The segments of {@code args}, in order, after checking them all; throws naming the first at fault. */
    public MemorySegment[] check(NDArray[] args) {
        if (args == null || args.length != params.length) {
            throw new KilnException("kernel '" + fn + "' takes " + params.length + " argument(s) "
                    + Arrays.stream(params).map(Buffer::name).toList() + ", got " + (args == null ? 0 : args.length));
        }
        MemorySegment[] segs = new MemorySegment[args.length];
        for (int i = 0; i < args.length; i++) segs[i] = checkOne(i, args[i]);
        for (int i = 0; i < args.length; i++) {
            if (!written[i] || bytes[i] == 0) continue;
            for (int j = 0; j < args.length; j++) {
                if (j == i || bytes[j] == 0) continue;
                if (overlap(segs[i], bytes[i], segs[j], bytes[j])) {
                    throw new KilnException(who(i) + " overlaps argument " + j + " (parameter '" + params[j].name()
                            + "'); the kernel writes '" + params[i].name()
                            + "' and needs it not to share memory with any other argument");
                }
            }
        }
        return segs;
    }

    private MemorySegment checkOne(int i, NDArray a) {
        Buffer p = params[i];
        if (a == null) throw new KilnException(who(i) + " is null");
        if (a.dtype() != p.dtype()) {
            throw new KilnException(who(i) + " has dtype " + a.dtype() + ", expected " + p.dtype());
        }
        if (!Arrays.equals(a.shape(), shapes[i])) {
            throw new KilnException(
                    who(i) + " has shape " + Arrays.toString(a.shape()) + ", expected " + Arrays.toString(shapes[i]));
        }
        if (!Arrays.equals(a.strides(), strides[i]) && a.numElements() > 0) {
            throw new KilnException(who(i) + " has strides " + Arrays.toString(a.strides()) + ", but the kernel was "
                    + "compiled for strides " + Arrays.toString(strides[i]) + " (make a compact copy with copy())");
        }
        MemorySegment s = a.segment();
        if (!s.scope().isAlive()) throw new KilnException(who(i) + " is closed");
        if (nativeOnly) {
            if (!s.isNative()) throw new KilnException(who(i) + " is not in native memory");
            if (s.address() % NDArray.ALIGNMENT != 0) {
                throw new KilnException(who(i) + " is not " + NDArray.ALIGNMENT + "-byte aligned (address 0x"
                        + Long.toHexString(s.address()) + ")");
            }
        }
        if (s.byteSize() < bytes[i]) {
            throw new KilnException(who(i) + " holds " + s.byteSize() + " bytes, the kernel reads up to " + bytes[i]);
        }
        return s;
    }

    /** Whether two byte ranges share memory: both native, or both on the same heap array. */
    private static boolean overlap(MemorySegment a, long na, MemorySegment b, long nb) {
        if (a.isNative() != b.isNative()) return false;
        if (!a.isNative() && a.heapBase().orElse(null) != b.heapBase().orElse(null)) return false;
        long x = a.address(), y = b.address();
        return x < y + nb && y < x + na;
    }

    private String who(int i) {
        return "kernel '" + fn + "' argument " + i + " (parameter '" + params[i].name() + "')";
    }
}
