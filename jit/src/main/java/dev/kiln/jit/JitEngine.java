package dev.kiln.jit;

import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything the LLVM backend keeps for one CPU target: the {@link OrcJit}, the two parallel
 * runtimes linked into it, and the compile cache. The cache maps (program key, target, options)
 * to compiled code, so the same program compiles once; it holds at most {@link #capacity}
 * entries, evicting the least recently used one that no open kernel handle uses.
 */
final class JitEngine implements AutoCloseable {
    /** Default tuning of both pools, chosen by measurement (docs/PERFORMANCE.md). */
    static final long PARALLEL_THRESHOLD = 100_000;

    static final int SPIN = 2_000;
    static final long CHUNKS_PER_THREAD = 4;

    private static final AtomicLong SYMBOLS = new AtomicLong();

    private final CpuTarget target;
    private final OrcJit jit;
    private final NativePool nativePool;
    private final Map<String, CompiledCode> cache = new LinkedHashMap<>(16, 0.75f, true);
    private final int capacity;
    private final AtomicLong compiles = new AtomicLong();
    private boolean closed;

    JitEngine(CpuTarget target, int capacity) {
        this.target = target;
        this.capacity = capacity;
        this.jit = new OrcJit(target);
        NativePool np = null;
        try {
            jit.defineAbsolute(JavaPool.PARALLEL_FOR, JavaPool.stubAddress());
            np = new NativePool(jit);
        } catch (RuntimeException e) {
            jit.close();
            throw e;
        }
        this.nativePool = np;
    }

    CpuTarget target() {
        return target;
    }

    NativePool nativePool() {
        return nativePool;
    }

    /** How many programs this engine has compiled (cache misses). */
    long compiles() {
        return compiles.get();
    }

    LlvmKernel compile(PrimFunc f, JitOptions options) {
        String key = ProgramKey.of(f) + "\n#target " + target + "\n#options " + options.key();
        CompiledCode code;
        synchronized (this) {
            if (closed) throw new KilnException("the LLVM backend for " + target + " is closed");
            code = cache.get(key);
            if (code != null && code.acquire()) return new LlvmKernel(code);
        }
        code = build(f, options);
        synchronized (this) {
            CompiledCode raced = cache.get(key);
            if (raced != null && raced.acquire()) {
                code.free();
                return new LlvmKernel(raced);
            }
            code.acquire();
            cache.put(key, code);
            evict();
        }
        return new LlvmKernel(code);
    }

    private CompiledCode build(PrimFunc f, JitOptions options) {
        long t0 = System.nanoTime();
        String symbol = "kiln_" + f.name().replaceAll("[^A-Za-z0-9_]", "_") + "_" + SYMBOLS.incrementAndGet();
        KernelGen.Result gen = KernelGen.generate(f, target, options, symbol);
        double generateMs = (System.nanoTime() - t0) / 1e6;
        if (gen.parallel()) startRuntime(options.runtime());
        JitModule m = jit.add(f.name(), gen.ir(), List.of(gen.symbol(), gen.packedSymbol()), options.optimize());
        compiles.incrementAndGet();
        try {
            return new CompiledCode(f, target, options, gen, m, generateMs);
        } catch (RuntimeException e) {
            m.close();
            throw e;
        }
    }

    private void startRuntime(ParallelRuntime r) {
        int workers = Math.max(0, target.cores() - 1);
        switch (r) {
            case NATIVE_POOL -> nativePool.start(workers, PARALLEL_THRESHOLD, SPIN, CHUNKS_PER_THREAD);
            case JAVA_POOL -> JavaPool.start(workers, PARALLEL_THRESHOLD, SPIN, CHUNKS_PER_THREAD);
        }
    }

    private void evict() {
        Iterator<Map.Entry<String, CompiledCode>> it = cache.entrySet().iterator();
        while (cache.size() > capacity && it.hasNext()) {
            CompiledCode c = it.next().getValue();
            if (!c.inUse()) {
                c.free();
                it.remove();
            }
        }
    }

    /** Retunes a running parallel runtime (for benchmarks); see {@link NativePool#start}. */
    void tune(ParallelRuntime r, long threshold, int spin, long chunksPerThread) {
        switch (r) {
            case NATIVE_POOL -> nativePool.tune(threshold, spin, chunksPerThread);
            case JAVA_POOL -> JavaPool.tune(threshold, spin, chunksPerThread);
        }
    }

    /** Frees every cached program that no open kernel uses. */
    synchronized void clearUnused() {
        cache.values().removeIf(c -> {
            if (c.inUse()) return false;
            c.free();
            return true;
        });
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        List<CompiledCode> all = new ArrayList<>(cache.values());
        cache.clear();
        for (CompiledCode c : all) c.free();
        nativePool.close();
        jit.close();
    }
}
