package dev.kiln.target;

import dev.kiln.ir.KilnException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a program is compiled for: the kind of device and the facts about it that code
 * generation and the auto-scheduler need (a CPU's triple, name, features, cores and vector
 * width; a GPU's architecture, thread and shared-memory limits).
 *
 * <p>Every target has a stable one-line string form, which is what tuning logs and compile caches
 * store: {@code cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=znver5 -mattr=+avx2,+fma -cores=2
 * -vector-bits=512 -cache-line=64}. {@link #parse} reads it back, so
 * {@code Target.parse(t.toString()).equals(t)}.
 *
 * <p>{@link #CPU}, {@link #JVM} and {@link #CUDA} are the usual targets as constants; the factories
 * {@link #cpu()}, {@link #jvm()} and {@link #cuda()} give the same values.
 */
public sealed interface Target permits CpuTarget, CudaTarget {

    /** The kinds of device Kiln compiles for. */
    enum Kind {
        CPU("cpu", false),
        CUDA("cuda", true);

        private final String tag;
        private final boolean gpu;

        Kind(String tag, boolean gpu) {
            this.tag = tag;
            this.gpu = gpu;
        }

        /** The first word of the string form. */
        public String tag() {
            return tag;
        }

        /**
         * Whether programs for this kind are GPU kernels: outer loops bound to blocks and threads,
         * under the device's thread and shared-memory limits (the auto-scheduler's GPU rules,
         * features and checks); otherwise a CPU's loops with parallel, vector and register tiles.
         */
        public boolean isGpu() {
            return gpu;
        }
    }

    /**
     * The host CPU, as {@link #cpu()} detects it (once, when {@code Target} is first used): the
     * target of {@code Kiln.compile(C, Target.CPU)} and {@code AutoSchedule.tune(C, Target.CPU)}.
     */
    CpuTarget CPU = cpu();

    /** The pure-JVM backend on this host, as {@link #jvm()} describes it. */
    CpuTarget JVM = jvm();

    /**
     * An NVIDIA H200 (sm_90), as {@link #cuda()} describes it, without asking a driver: compiling
     * for it works on any machine; running or tuning needs a GPU and its driver, and says so plainly
     * when there is none ({@code CudaBackend.deviceTarget()} reads the real device).
     */
    CudaTarget CUDA = cuda();

    Kind kind();

    /** The stable string form (see the class comment). */
    @Override
    String toString();

    /** The host CPU, detected from {@code /proc/cpuinfo} and the JVM without loading LLVM. */
    static CpuTarget cpu() {
        return HostCpu.detect();
    }

    /**
     * The pure-JVM backend on this host (module jit, {@code dev.kiln.jit.jvm}): a CPU target whose
     * triple is {@code jvm}, which no LLVM backend claims, with the host's cores, vector width and
     * cache line, so the auto-scheduler treats it as the CPU it runs on.
     */
    static CpuTarget jvm() {
        CpuTarget host = cpu();
        return new CpuTarget("jvm", "hotspot", "", host.cores(), host.vectorBits(), host.cacheLineBytes());
    }

    /** An NVIDIA H200 (sm_90): 1024 threads and 48 KiB static shared memory per block, warps of 32. */
    static CudaTarget cuda() {
        return CudaTarget.h200();
    }

    /** Reads the string form of a target back. */
    static Target parse(String s) {
        String[] words = s.trim().split("\\s+");
        if (words.length == 0 || words[0].isEmpty()) throw new KilnException("empty target string");
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 1; i < words.length; i++) {
            String w = words[i];
            int eq = w.indexOf('=');
            if (!w.startsWith("-") || eq < 0) {
                throw new KilnException("target '" + s + "': option '" + w + "' is not of the form -key=value");
            }
            if (opts.put(w.substring(1, eq), w.substring(eq + 1)) != null) {
                throw new KilnException("target '" + s + "': option -" + w.substring(1, eq) + " is given twice");
            }
        }
        return switch (words[0]) {
            case "cpu" -> CpuTarget.fromOptions(s, opts);
            case "cuda" -> CudaTarget.fromOptions(s, opts);
            default ->
                throw new KilnException("target '" + s + "': unknown kind '" + words[0] + "' (known: cpu, cuda)");
        };
    }
}
