package dev.kiln.bench.lowp;

import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_DST;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_SRC;
import static org.bytedeco.dnnl.global.dnnl.DNNL_ARG_WEIGHTS;

import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.bytedeco.dnnl.IntMemoryMap;
import org.bytedeco.dnnl.convolution_forward;
import org.bytedeco.dnnl.dnnl_version_t;
import org.bytedeco.dnnl.engine;
import org.bytedeco.dnnl.global.dnnl;
import org.bytedeco.dnnl.matmul;
import org.bytedeco.dnnl.memory;
import org.bytedeco.dnnl.primitive;
import org.bytedeco.dnnl.primitive_attr;
import org.bytedeco.dnnl.primitive_desc;
import org.bytedeco.dnnl.reorder;
import org.bytedeco.dnnl.stream;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;

/**
 * oneDNN (org.bytedeco dnnl, in this process) on the same cases: {@code matmul} and
 * {@code convolution_forward} with u8 x s8 -> s32 or bf16 x bf16 -> f32 (f32 x f32 -> f32 for the
 * float32 rows), every descriptor {@code format_tag::any} so oneDNN picks its blocked layouts; the
 * inputs are reordered into those once, outside the timing; the destination is reordered back to
 * Kiln's layout for the check. Threads: OpenMP's, set with {@code omp_set_num_threads} on the
 * libgomp that the dnnl artifact bundles (found by Panama in the libraries JavaCPP loaded).
 */
final class DnnlLowp implements AutoCloseable {
    private final engine eng;
    private final stream strm;

    DnnlLowp() {
        try {
            eng = new engine(engine.kind.cpu, 0);
            strm = new stream(eng);
        } catch (Throwable e) {
            throw new IllegalStateException("oneDNN (org.bytedeco:dnnl, linux-x86_64) cannot be loaded: " + e, e);
        }
    }

    /** The version, runtime and the ISA oneDNN dispatches to on this CPU. */
    static String describe() {
        dnnl_version_t v = dnnl.dnnl_version();
        return "oneDNN " + v.major() + "." + v.minor() + "." + v.patch() + ", effective ISA "
                + dnnl.get_effective_cpu_isa();
    }

    /** Sets OpenMP's thread count for oneDNN's next primitives; the reason when it cannot. */
    static String setThreads(int n) {
        try {
            Loader.load(dnnl.class);
            String gomp = Loader.getLoadedLibraries().values().stream()
                    .filter(p -> p.contains("libgomp"))
                    .findFirst()
                    .orElse(null);
            if (gomp == null) return "oneDNN threads: libgomp not among JavaCPP's libraries; OMP_NUM_THREADS governs";
            SymbolLookup lib = SymbolLookup.libraryLookup(Path.of(gomp), Arena.global());
            var set = java.lang.foreign.Linker.nativeLinker()
                    .downcallHandle(
                            lib.find("omp_set_num_threads").orElseThrow(),
                            FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
            set.invokeExact(n);
            return null;
        } catch (Throwable e) {
            return "oneDNN threads not set (" + e + "); OMP_NUM_THREADS governs";
        }
    }

    /** What oneDNN gave: the timing, its implementation string, and its output in Kiln's layout. */
    record Result(KernelTimer.Timing timing, String impl, NDArray output) {}

    Result run(LowpCase c, NDArray x, NDArray w, KernelTimer timer) {
        memory.data_type src = type(c.inType()), wt = type(c.weightType()), dt = type(c.outType());
        primitive_desc pd;
        memory.desc userSrc, userW, userDst;
        long[] p = c.p();
        if (c.kind().equals("gemm")) {
            long m = p[0], n = p[1], k = p[2];
            userSrc = plain(src, new long[] {m, k}, new long[] {k, 1});
            userW = plain(wt, new long[] {k, n}, new long[] {n, 1});
            userDst = plain(dt, new long[] {m, n}, new long[] {n, 1});
            pd = new matmul.primitive_desc(eng, any(src, m, k), any(wt, k, n), any(dt, m, n));
        } else {
            long h = p[0], wd = p[1], ch = p[2], k = p[3], r = p[4], oh = c.outH(), ow = c.outW();
            userSrc = plain(src, new long[] {1, ch, h, wd}, new long[] {h * wd * ch, 1, wd * ch, ch});
            userW = plain(wt, new long[] {k, ch, r, r}, new long[] {1, k, r * ch * k, ch * k});
            userDst = plain(dt, new long[] {1, k, oh, ow}, new long[] {oh * ow * k, 1, ow * k, k});
            long[] zero = {0, 0};
            pd = new convolution_forward.primitive_desc(
                    eng,
                    dnnl.prop_kind.forward_inference,
                    dnnl.algorithm.convolution_direct,
                    any(src, 1, ch, h, wd),
                    any(wt, k, ch, r, r),
                    any(dt, 1, k, oh, ow),
                    new long[] {1, 1},
                    zero,
                    zero,
                    zero,
                    new primitive_attr(),
                    false);
        }
        try (primitive prim = new primitive(pd)) {
            IntMemoryMap args = new IntMemoryMap();
            args.put(DNNL_ARG_SRC, load(wrap(userSrc, x), pd.src_desc()));
            args.put(DNNL_ARG_WEIGHTS, load(wrap(userW, w), pd.weights_desc()));
            memory dst = new memory(pd.dst_desc(), eng);
            args.put(DNNL_ARG_DST, dst);
            KernelTimer.Timing t = timer.time(() -> {
                prim.execute(strm, args);
                strm._wait();
            });
            NDArray out = NDArray.allocate(c.outType(), c.outShape());
            memory user = wrap(userDst, out);
            new reorder(dst, user).execute(strm, dst, user);
            strm._wait();
            String impl = pd.impl_info_str().getString();
            pd.close();
            return new Result(t, impl, out);
        }
    }

    private memory load(memory src, memory.desc want) {
        if (src.get_desc().equals(want)) return src;
        memory dst = new memory(want, eng);
        new reorder(src, dst).execute(strm, src, dst);
        strm._wait();
        return dst;
    }

    private memory wrap(memory.desc md, NDArray a) {
        return new memory(md, eng, new BytePointer(a.segment().asByteBuffer()));
    }

    private static memory.desc plain(memory.data_type t, long[] dims, long[] strides) {
        return new memory.desc(dims, t, strides);
    }

    private static memory.desc any(memory.data_type t, long... dims) {
        return new memory.desc(dims, t, memory.format_tag.any);
    }

    private static memory.data_type type(DType t) {
        return switch (t) {
            case UINT8 -> memory.data_type.u8;
            case INT8 -> memory.data_type.s8;
            case INT32 -> memory.data_type.s32;
            case BFLOAT16 -> memory.data_type.bf16;
            case FLOAT32 -> memory.data_type.f32;
            default -> throw new IllegalArgumentException("oneDNN: no data type for " + t);
        };
    }

    @Override
    public void close() {
        strm.close();
        eng.close();
    }
}
