package dev.kiln.cuda.compile;

import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.ir.KilnException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Turns a {@link CudaModule} into PTX for a compute capability: with {@link Nvrtc} when it is
 * available, else with {@link Nvcc} when there is one, which is logged (WARNING, once) and named
 * in every {@link Result}; never silently. Results go through a {@link PtxCache}. Modules that use
 * float16 or bfloat16 include {@code cuda_fp16.h}/{@code cuda_bf16.h}, those with Tensor Core
 * nests {@code mma.h}: NVRTC gets the toolkit's include directories it can find
 * ({@code $CUDA_HOME/include}, {@code /usr/local/cuda*}/include) for any module that includes a header.
 */
public final class CudaCompiler {
    private static final System.Logger LOG = System.getLogger(CudaCompiler.class.getName());
    private static volatile boolean warnedFallback;

    private final PtxCache cache;

    public CudaCompiler(PtxCache cache) {
        this.cache = cache;
    }

    /** A compiler with the default cache. */
    public static CudaCompiler withDefaultCache() {
        return new CudaCompiler(PtxCache.defaultCache());
    }

    /**
     * Compiled PTX and how it was obtained.
     *
     * @param compiler "nvrtc 12.4" or "nvcc"
     * @param cached   whether it came from the disk cache
     * @param seconds  compile time (0 when cached)
     */
    public record Result(String ptx, String compiler, boolean cached, double seconds) {}

    /** Which compiler {@link #compile} uses here, or why there is none. */
    public static String describe() {
        Nvrtc.Availability a = Nvrtc.availability();
        if (a.available()) return a.toString();
        return Nvcc.find().map(p -> "nvcc " + p + " (" + a + ")").orElse(a + "; and no nvcc");
    }

    public Result compile(CudaModule m, int computeCapability) {
        String arch = "sm_" + computeCapability;
        Nvrtc.Availability a = Nvrtc.availability();
        List<String> flags = new ArrayList<>(m.options().compileFlags());
        String compiler;
        if (a.available()) {
            compiler = "nvrtc " + a.version();
            if (m.source().contains("#include <")) for (Path inc : includeDirs()) flags.add("--include-path=" + inc);
        } else if (Nvcc.find().isPresent()) {
            compiler = "nvcc";
            if (!warnedFallback) {
                warnedFallback = true;
                LOG.log(System.Logger.Level.WARNING, "CUDA kernels are compiled with nvcc: " + a);
            }
        } else {
            throw new KilnException("cannot compile CUDA C: " + a + ", and nvcc is not on the PATH");
        }
        String key = PtxCache.key(m.source(), arch, flags, compiler);
        var hit = cache.get(key);
        if (hit.isPresent()) return new Result(hit.get(), compiler, true, 0);
        long t0 = System.nanoTime();
        String ptx = compiler.equals("nvcc")
                ? Nvcc.ptx(m.source(), arch, flags)
                : Nvrtc.compile(m.source(), m.func().name() + ".cu", computeCapability, flags);
        double s = (System.nanoTime() - t0) / 1e9;
        cache.put(key, ptx);
        return new Result(ptx, compiler, false, s);
    }

    /** Toolkit include directories that hold cuda_fp16.h. */
    static List<Path> includeDirs() {
        Set<Path> dirs = new LinkedHashSet<>();
        String home = System.getenv("CUDA_HOME");
        if (home != null) dirs.add(Path.of(home, "include"));
        dirs.add(Path.of("/usr/local/cuda/include"));
        dirs.add(Path.of("/usr/local/cuda/targets/x86_64-linux/include"));
        try (var s = Files.list(Path.of("/usr/local"))) {
            s.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                    .sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> dirs.add(p.resolve("include")));
        } catch (java.io.IOException | RuntimeException e) {
            // nothing under /usr/local
        }
        dirs.add(Path.of("/usr/include"));
        return dirs.stream()
                .filter(d -> Files.isRegularFile(d.resolve("cuda_fp16.h")))
                .limit(1)
                .toList();
    }
}
