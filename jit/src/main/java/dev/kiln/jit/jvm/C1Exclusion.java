package dev.kiln.jit.jvm;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.management.ObjectName;

/**
 * Keeps HotSpot's C1 off the generated kernels, so that they go from the interpreter straight to C2.
 *
 * <p>Why: C1 gives up on large generated methods full of Vector API calls ("out of virtual registers in
 * linear scan", at tier 3). HotSpot then keeps running the method's tier-2 C1 code, in which every Vector
 * API operation is a call and an allocation, and never moves it on to C2: a tuned GEMM whose 16-vector
 * tile method hit this ran 12 s per call instead of 0.19 s, for as long as the process lived. That is
 * what a tuning trial measured, so the search ranked such programs last. C1's code for these methods is
 * no use anyway (the Vector API is intrinsified only by C2), so the backend adds a compiler directive
 * ({@code c1: {Exclude: true}} for the hidden classes {@code dev.kiln.jit.jvm.Kernel*}) once, through the
 * {@code DiagnosticCommand} MBean ({@code Compiler.directives_add}, what {@code jcmd} uses), before the
 * first kernel is defined. Excluding a method from C1 lets the tiered policy profile it in the interpreter
 * and compile it with C2.
 *
 * <p>{@code -Dkiln.jvm.c1=true} keeps C1 (for A/B measurements). When the directive cannot be added (no
 * {@code jdk.management} module, a JVM without the command), a warning is logged once and the kernels run
 * with C1 as before; {@link #state()} says which.
 */
final class C1Exclusion {
    private C1Exclusion() {}

    private static final System.Logger LOG = System.getLogger(C1Exclusion.class.getName());
    static final String DIRECTIVE = "[{ match: \"dev/kiln/jit/jvm/Kernel*.*\", c1: { Exclude: true } }]";

    private static String state;

    /** Adds the directive once per process (unless {@code kiln.jvm.c1=true}); returns {@link #state()}. */
    static synchronized String ensure() {
        if (state != null) return state;
        if (Boolean.getBoolean("kiln.jvm.c1")) return state = "C1 kept for generated kernels (-Dkiln.jvm.c1=true)";
        try {
            Path file = Files.createTempFile("kiln-jvm-c1-exclusion", ".json");
            file.toFile().deleteOnExit();
            Files.writeString(file, DIRECTIVE);
            Object out = ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "compilerDirectivesAdd",
                            new Object[] {new String[] {file.toString()}},
                            new String[] {String[].class.getName()});
            String text = String.valueOf(out).strip();
            if (!text.isEmpty() && !text.contains("1 compiler directives added")) {
                throw new IllegalStateException("Compiler.directives_add answered: " + text);
            }
            state = "C1 excluded for generated kernels (Compiler.directives_add)";
        } catch (Exception | LinkageError e) {
            state = "C1 not excluded for generated kernels: " + e;
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the JVM backend could not keep C1 off its kernels (" + e + "); a kernel C1 gives up on may run"
                            + " its slow tier-2 code instead of C2's until the process ends");
        }
        return state;
    }

    /** What {@link #ensure()} did, or null before the first kernel. */
    static synchronized String state() {
        return state;
    }
}
