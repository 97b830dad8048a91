package dev.kiln.bench.suite;

import dev.kiln.runtime.NDArray;
import java.nio.ByteOrder;
import org.bytedeco.dnnl.engine;
import org.bytedeco.dnnl.memory;
import org.bytedeco.dnnl.reorder;
import org.bytedeco.dnnl.stream;
import org.bytedeco.javacpp.FloatPointer;

/**
 * oneDNN memory descriptors for Kiln's channels-last arrays, and the reorders between them and a
 * primitive's own (blocked) layouts. Dims are in oneDNN's order (N, C, spatial...; weights
 * [G,] O, I, spatial...); strides say where Kiln keeps each axis.
 */
final class DnnlMemory {
    private DnnlMemory() {}

    static final memory.data_type F32 = memory.data_type.f32;

    /** Strides of an array laid out as {@code order} (outermost first), given as indices into {@code dims}. */
    static long[] strides(long[] dims, int... order) {
        long[] s = new long[dims.length];
        long step = 1;
        for (int i = order.length - 1; i >= 0; i--) {
            s[order[i]] = step;
            step *= dims[order[i]];
        }
        return s;
    }

    /** The descriptor of data [N, C, S...] held channels-last (N, S..., C). */
    static memory.desc channelsLast(long[] dims) {
        int[] order = new int[dims.length];
        order[0] = 0;
        for (int i = 2; i < dims.length; i++) order[i - 1] = i;
        order[dims.length - 1] = 1;
        return new memory.desc(dims, F32, strides(dims, order));
    }

    /** A plain row-major descriptor. */
    static memory.desc rowMajor(long... dims) {
        int[] order = new int[dims.length];
        for (int i = 0; i < dims.length; i++) order[i] = i;
        return new memory.desc(dims, F32, strides(dims, order));
    }

    /** A descriptor letting the primitive choose the layout. */
    static memory.desc any(long... dims) {
        return new memory.desc(dims, F32, memory.format_tag.any);
    }

    /** oneDNN memory over a Kiln array (no copy). */
    static memory wrap(memory.desc md, engine eng, NDArray a) {
        return new memory(
                md,
                eng,
                new FloatPointer(a.segment()
                        .asByteBuffer()
                        .order(ByteOrder.nativeOrder())
                        .asFloatBuffer()));
    }

    /** {@code src} reordered into a fresh memory of {@code md} (the same memory when the layouts agree). */
    static memory reorderTo(memory src, memory.desc md, engine eng, stream s) {
        if (src.get_desc().equals(md)) return src;
        memory dst = new memory(md, eng);
        new reorder(src, dst).execute(s, src, dst);
        s._wait();
        return dst;
    }

    /** Copies {@code src} into {@code dst} (any layouts, same dims). */
    static void copy(memory src, memory dst, stream s) {
        new reorder(src, dst).execute(s, src, dst);
        s._wait();
    }
}
