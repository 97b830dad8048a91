package dev.kiln.jit;

import dev.kiln.ir.KilnException;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.target.WorkerPool;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The CPU backend: compiles loop programs to machine code with LLVM (through Bytedeco's C API)
 * and ORC LLJIT, for the host's architecture. Registered for {@link java.util.ServiceLoader} as a
 * {@link Backend}. State (one JIT, the parallel runtimes and a compile cache per target) is
 * process-wide, so every instance of this class shares it.
 */
public final class LlvmBackend implements Backend {
    private static final Map<String, JitEngine> ENGINES = new HashMap<>();
    /**
     * Compiled programs the cache keeps per target (at most; entries in use by an open kernel are
     * never evicted): 512, or the system property {@code kiln.jit.cacheCapacity}.
     */
    public static final int CACHE_CAPACITY = Integer.getInteger("kiln.jit.cacheCapacity", 512);

    @Override
    public String name() {
        return "llvm";
    }

    /** CPU targets of the host's architecture (the JIT runs code in this process). */
    @Override
    public boolean supports(Target target) {
        if (!(target instanceof CpuTarget c)) return false;
        String arch = System.getProperty("os.arch", "");
        String hostArch = arch.equals("amd64") ? "x86_64" : arch.equals("arm64") ? "aarch64" : arch;
        return c.triple().startsWith(hostArch + "-");
    }

    @Override
    public LlvmKernel compile(PrimFunc func, Target target) {
        boolean fast = target instanceof CpuTarget c && c.fastMath();
        return compile(func, target, JitOptions.defaults().withFpContract(fast));
    }

    /** Compiles with explicit code generation options (runtime choice, vector width, optimisation). */
    public LlvmKernel compile(PrimFunc func, Target target, JitOptions options) {
        if (!supports(target)) {
            throw new KilnException("the LLVM backend compiles for CPU targets of this host ("
                    + System.getProperty("os.arch") + "), not for '" + target + "'");
        }
        return engine((CpuTarget) target).compile(func, options);
    }

    /** The tensor intrinsics implemented here that {@code target} has the CPU features for. */
    @Override
    public java.util.Set<String> intrinsics(Target target) {
        return supports(target) ? CpuIntrinsics.available((CpuTarget) target) : java.util.Set.of();
    }

    /** The host CPU as LLVM sees it: {@link Target#cpu()} with LLVM's CPU name and its full feature string. */
    public static CpuTarget hostTarget() {
        CpuTarget t = Target.cpu();
        return t.withCpu(Llvm.hostCpuName(), Llvm.hostCpuFeatures());
    }

    /** How many programs have been compiled for {@code target} (compile cache misses). */
    public static long compileCount(CpuTarget target) {
        synchronized (ENGINES) {
            JitEngine e = ENGINES.get(target.toString());
            return e == null ? 0 : e.compiles();
        }
    }

    /**
     * Retunes a parallel runtime of {@code target} that has started (by compiling a kernel with a
     * parallel loop for it): loops below {@code threshold} estimated operations run serially,
     * idle threads poll {@code spin} times before sleeping, loops are cut into
     * {@code chunksPerThread} chunks per thread. For benchmarks that sweep these settings.
     */
    public static void tuneRuntime(
            CpuTarget target, ParallelRuntime r, long threshold, int spin, long chunksPerThread) {
        engine(target).tune(r, threshold, spin, chunksPerThread);
    }

    /** {@link #tuneRuntime} with the default threshold and spin and {@code chunksPerThread} chunks per thread. */
    public static void tuneRuntimeChunks(CpuTarget target, ParallelRuntime r, long chunksPerThread) {
        tuneRuntime(target, r, JitEngine.PARALLEL_THRESHOLD, JitEngine.SPIN, chunksPerThread);
    }

    /** The chunks per thread a parallel runtime starts with. */
    public static long defaultChunksPerThread() {
        return JitEngine.CHUNKS_PER_THREAD;
    }

    /**
     * The native parallel runtime of {@code target} (the default {@link ParallelRuntime}): a hold
     * keeps its threads polling between loops, and it counts their futex sleeps. Kernels compiled
     * with {@link ParallelRuntime#JAVA_POOL} run on a pool this does not hold.
     */
    /**
     * {@code clflush} of every line, then a fence, in the native runtime of {@code target}'s engine; kernels'
     * temporaries are the blocks of that runtime's workspace cache.
     */
    @Override
    public Optional<CacheEviction> cacheEviction(Target target) {
        if (!supports(target)) return Optional.empty();
        NativePool p = engine((CpuTarget) target).nativePool();
        return Optional.of(new CacheEviction() {
            @Override
            public void evict(MemorySegment segment) {
                p.evict(segment);
            }

            @Override
            public long evictTemporaries(long bytes) {
                return p.evictWorkspace(bytes);
            }
        });
    }

    @Override
    public WorkerPool workerPool(Target target) {
        if (!supports(target)) return WorkerPool.NONE;
        NativePool p = engine((CpuTarget) target).nativePool();
        return new WorkerPool() {
            @Override
            public void hold() {
                p.hold(1);
            }

            @Override
            public void release() {
                p.hold(-1);
            }

            @Override
            public long sleeps() {
                return p.sleeps();
            }

            @Override
            public String toString() {
                return "the native pool of " + target;
            }
        };
    }

    /** Frees every cached program of every target that no open kernel uses. */
    public static void clearCache() {
        synchronized (ENGINES) {
            for (JitEngine e : ENGINES.values()) e.clearUnused();
        }
    }

    /**
     * How many heap temporaries (allocations above the stack limit) the kernels compiled for
     * {@code target} have taken from the C heap so far: misses of the workspace cache that keeps
     * them mapped between calls. A kernel called again adds none while the cache has room.
     */
    public static long workspaceMisses(CpuTarget target) {
        return engine(target).nativePool().workspaceMisses();
    }

    private static JitEngine engine(CpuTarget t) {
        synchronized (ENGINES) {
            return ENGINES.computeIfAbsent(t.toString(), k -> new JitEngine(t, CACHE_CAPACITY));
        }
    }
}
