package dev.kiln.target;

/**
 * The limits of the register tiles the pure-JVM backend ({@code Target.jvm()}) keeps in vector locals, in one
 * place for the two modules that need them: the generator (module jit: {@code RegisterTiles} unrolls a tile's
 * rows, {@code Promotion} keeps its accumulators in locals) and the JVM target's search rules (module
 * autoschedule: {@code CheckJvmTiles} refuses programs whose tile the generator would not keep). Neither module
 * sees the other's main code; both see this one.
 */
public final class JvmRegisterTiles {
    private JvmRegisterTiles() {}

    /** Most rows of a register tile the JVM backend unrolls into separate vector locals. */
    public static final long MAX_ROWS = 16;

    /**
     * Most vector locals a register tile may use in all (accumulators plus operands) at {@code vectorBits}-bit
     * vectors: 24 with AVX-512's 32 registers, 12 with 16.
     */
    public static int maxVectors(int vectorBits) {
        return vectorBits >= 512 ? 24 : 12;
    }
}
