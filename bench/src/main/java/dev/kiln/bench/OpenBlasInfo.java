package dev.kiln.bench;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;

/**
 * Which OpenBLAS kernel runs: bytedeco does not map {@code openblas_get_corename}, so it is called
 * through Panama on the library JavaCPP loaded. Benchmarks print it next to their numbers.
 */
final class OpenBlasInfo {
    private OpenBlasInfo() {}

    static String coreName() {
        org.bytedeco.javacpp.Loader.load(org.bytedeco.openblas.global.openblas_nolapack.class);
        try {
            MemorySegment fn = SymbolLookup.loaderLookup().find("openblas_get_corename")
                    .or(() -> Linker.nativeLinker().defaultLookup().find("openblas_get_corename"))
                    .orElseThrow(() -> new IllegalStateException("openblas_get_corename not found"));
            var h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.of(ValueLayout.ADDRESS));
            MemorySegment s = (MemorySegment) h.invokeExact();
            return s.reinterpret(64).getString(0);
        } catch (Throwable e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }
}
