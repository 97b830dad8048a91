package dev.kiln.jit.jvm;

import dev.kiln.ir.KilnException;
import dev.kiln.target.Backend;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The pure-JVM backend: compiles loop programs to bytecode (ASM) in hidden classes that HotSpot
 * JIT-compiles, with vectorized loops on the Vector API and parallel loops on a fork/join pool.
 * It needs nothing outside the JDK. Registered for {@link java.util.ServiceLoader} as a
 * {@link Backend} for {@link JvmTarget} targets. The compile cache (keyed by the printed program
 * and the target) is process-wide.
 */
public final class JvmBackend implements Backend {
    /** Compiled programs the cache keeps (at most; least recently used first out). */
    public static final int CACHE_CAPACITY = 1024;

    private static final Map<String, CompiledClass> CACHE = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CompiledClass> e) {
            return size() > CACHE_CAPACITY;
        }
    };
    private static long compiles;

    @Override
    public String name() {
        return "jvm";
    }

    @Override
    public boolean supports(Target target) {
        return JvmTarget.isJvm(target);
    }

    @Override
    public JvmKernel compile(PrimFunc func, Target target) {
        if (!supports(target)) {
            throw new KilnException("the JVM backend compiles for JVM targets (JvmTarget.jvm(), triple '"
                    + JvmTarget.TRIPLE + "'), not for '" + target + "'");
        }
        CpuTarget t = (CpuTarget) target;
        String key = t + "\n" + dev.kiln.jit.ProgramKey.of(func);
        CompiledClass c;
        synchronized (CACHE) {
            c = CACHE.get(key);
        }
        if (c == null) {
            CompiledClass fresh = JvmCompiler.compile(func, t);
            synchronized (CACHE) {
                c = CACHE.get(key);
                if (c == null) {
                    CACHE.put(key, fresh);
                    compiles++;
                    c = fresh;
                }
            }
        }
        return new JvmKernel(c, func);
    }

    /**
     * Whether HotSpot's C1 is kept off the generated kernels in this process (see the class comment of
     * {@code C1Exclusion}), or null before the first compile.
     */
    public static String c1State() {
        return C1Exclusion.state();
    }

    /** How many programs have been compiled (compile cache misses), over all targets. */
    public static long compileCount() {
        synchronized (CACHE) {
            return compiles;
        }
    }

    /** Empties the compile cache; kernels already made keep working. */
    public static void clearCache() {
        synchronized (CACHE) {
            CACHE.clear();
        }
    }
}
