package dev.kiln.jit.jvm;

/**
 * Whether the Vector API (the incubator module {@code jdk.incubator.vector}) is available in this
 * JVM, and its preferred vector width. The module's classes are only touched when it is present.
 */
final class VectorWidth {
    private VectorWidth() {}

    static final boolean AVAILABLE =
            ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    /** The preferred vector width in bits, or 64 when the Vector API is not available. */
    static int preferredBits() {
        return AVAILABLE ? Preferred.BITS : 64;
    }

    private static final class Preferred {
        static final int BITS = jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }
}
