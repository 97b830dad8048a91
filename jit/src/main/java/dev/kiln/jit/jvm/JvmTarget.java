package dev.kiln.jit.jvm;

import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;

/**
 * The JVM target: the host CPU as the pure-JVM backend sees it. Until {@link Target} has a kind of
 * its own for it, it is a {@link CpuTarget} whose triple is {@value #TRIPLE} (no LLVM backend claims
 * that triple), with the host's cores and cache line and the Vector API's preferred vector width,
 * so the auto-scheduler treats it as the CPU it runs on. Its string form parses back with
 * {@link Target#parse}.
 */
public final class JvmTarget {
    private JvmTarget() {}

    /** The triple that marks a CPU target as the JVM backend's. */
    public static final String TRIPLE = "jvm";
    /** The CPU name of JVM targets. */
    public static final String CPU = "hotspot";

    /** The host, with all its cores. */
    public static CpuTarget jvm() {
        CpuTarget host = Target.cpu();
        return new CpuTarget(TRIPLE, CPU, "", host.cores(), VectorWidth.preferredBits(), host.cacheLineBytes());
    }

    /** The host with {@code cores} cores for parallel loops. */
    public static CpuTarget jvm(int cores) {
        return jvm().withCores(cores);
    }

    /** Whether {@code t} is a JVM target. */
    public static boolean isJvm(Target t) {
        return t instanceof CpuTarget c && c.triple().equals(TRIPLE);
    }
}
