package dev.kiln.samples;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;

/**
 * OpenBLAS (bytedeco) as the baseline a Java user would pick for matmul: row-major sgemm on all
 * cores, and which kernel it runs. Bytedeco does not map {@code openblas_get_corename}, so it is
 * called through Panama on the library JavaCPP loaded; benchmarks print it next to their numbers.
 * On AVX-512 machines OpenBLAS detects Haswell (AVX2, half speed) unless the environment sets
 * {@code OPENBLAS_CORETYPE=SkylakeX}; the benchmark commands do.
 */
public final class OpenBlas {
    private OpenBlas() {}

    /** The kernel OpenBLAS selected (e.g. "SkylakeX", "Haswell"). */
    public static String coreName() {
        org.bytedeco.javacpp.Loader.load(org.bytedeco.openblas.global.openblas_nolapack.class);
        try {
            MemorySegment fn = SymbolLookup.loaderLookup()
                    .find("openblas_get_corename")
                    .or(() -> Linker.nativeLinker().defaultLookup().find("openblas_get_corename"))
                    .orElseThrow(() -> new IllegalStateException("openblas_get_corename not found"));
            var h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.of(ValueLayout.ADDRESS));
            MemorySegment s = (MemorySegment) h.invokeExact();
            return s.reinterpret(64).getString(0);
        } catch (Throwable e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    /** Uses {@code threads} threads for the following calls. */
    public static void setThreads(int threads) {
        org.bytedeco.openblas.global.openblas_nolapack.blas_set_num_threads(threads);
    }

    /** C = A x B for row-major n x n float32 matrices held in native memory. */
    public static void sgemm(
            int m,
            int n,
            int k,
            org.bytedeco.javacpp.FloatPointer a,
            org.bytedeco.javacpp.FloatPointer b,
            org.bytedeco.javacpp.FloatPointer c) {
        org.bytedeco.openblas.global.openblas_nolapack.cblas_sgemm(
                org.bytedeco.openblas.global.openblas_nolapack.CblasRowMajor,
                org.bytedeco.openblas.global.openblas_nolapack.CblasNoTrans,
                org.bytedeco.openblas.global.openblas_nolapack.CblasNoTrans,
                m,
                n,
                k,
                1f,
                a,
                k,
                b,
                n,
                0f,
                c,
                n);
    }
}
