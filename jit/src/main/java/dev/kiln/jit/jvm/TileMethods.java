package dev.kiln.jit.jvm;

import dev.kiln.tir.For;

/**
 * Every loop that keeps a register tile in vector locals ({@link Promotion}) gets a method of its own: the
 * tile's loads, the reduction loop and the tile's stores, called once per tile.
 *
 * <p>Read with {@code -XX:+LogCompilation} on the best GEMM 1024 of a JVM tuning log (an 8 x 2-vector tile
 * inside {@code i.1 / i.2 / j.2} loops, all in one 2.9 KB method called 32 times per kernel call), the loop
 * nest's method had two ways to go wrong, each decided by timing:
 * <ul>
 *   <li>it was compiled by C2 when it had been entered only a few times and left not yet (each call ran
 *       seconds in the interpreter and in OSR code), so C2 saw its exit branch never taken and made it an
 *       uncommon trap ({@code unstable_if} at the method's last loop test): the first return deoptimized the
 *       method back to the interpreter, where it ran until C2 compiled it again (5.2 s per kernel call in one
 *       JVM for the rest of its run);
 *   <li>C2's parse of the method stood at about 18,000 nodes (the Vector API inlines into many) when it
 *       reached the tile's scalar loads of A, so any change in what came before (a type check more or less)
 *       decided whether {@code NodeCountInliningCutoff} left {@code Unsafe.getIntUnaligned} out of line: a call
 *       per load of A in the reduction loop, every vector register spilled (160-230 ms per call instead of
 *       15).
 * </ul>
 * A method per tile is invoked thousands of times per kernel call, so C2 compiles it as a normal method with
 * every branch profiled (and OSR is no longer what the kernel runs on), and it holds one tile's code, well
 * under the node cutoff. The cost is one static call per tile (16384 per GEMM 1024 call, each running a
 * 256-step reduction of 16 FMAs). Off with {@code -Dkiln.jvm.tileMethods=false} (read at each compile, for A/B
 * measurements).
 */
final class TileMethods {
    private TileMethods() {}

    /** Whether the generator outlines register-tile loops (default on). */
    static boolean enabled() {
        return !"false".equals(System.getProperty("kiln.jvm.tileMethods"));
    }

    /**
     * Whether promoted loop {@code f}, about to be emitted in {@code g}, goes to a method of its own: not when
     * {@code g} is that method already, nor when an enclosing loop of {@code g} keeps vectors in its locals.
     */
    static boolean outlines(MethodGen g, For f) {
        return enabled() && g.tileLoop != f && g.promotions.isEmpty();
    }
}
