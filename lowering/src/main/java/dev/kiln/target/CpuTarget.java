package dev.kiln.target;

import dev.kiln.ir.KilnException;
import java.util.Map;
import java.util.Objects;

/**
 * A CPU target.
 *
 * @param triple          the LLVM target triple, e.g. {@code x86_64-unknown-linux-gnu}
 * @param cpu             the LLVM CPU name, e.g. {@code znver5} or {@code x86-64-v4}
 * @param features        LLVM feature string, comma-separated {@code +name} entries (may be empty)
 * @param cores           how many cores parallel loops may use
 * @param vectorBits      the widest SIMD register in bits (128, 256 or 512)
 * @param cacheLineBytes  the cache line size in bytes
 * @param fastMath        whether float {@code a * b + c} may be contracted into one FMA (one rounding
 *                        instead of two), min and max may return either zero for -0 and +0, and
 *                        reduction terms that multiply zero padding may be skipped (the lowering's
 *                        {@code SkipPaddedTerms}: exact for finite values, but {@code 0 * inf} no longer
 *                        gives NaN). Off by default, so compiled code matches the interpreter
 *                        bit for bit; tuned kernels turn it on for speed and are checked with a
 *                        tolerance. Written {@code -fast-math=1} in the target string.
 */
public record CpuTarget(
        String triple, String cpu, String features, int cores, int vectorBits, int cacheLineBytes, boolean fastMath)
        implements Target {

    /** A target with exact floating-point semantics (no contraction). */
    public CpuTarget(String triple, String cpu, String features, int cores, int vectorBits, int cacheLineBytes) {
        this(triple, cpu, features, cores, vectorBits, cacheLineBytes, false);
    }

    public CpuTarget {
        Objects.requireNonNull(triple, "triple");
        Objects.requireNonNull(cpu, "cpu");
        Objects.requireNonNull(features, "features");
        for (String s : new String[] {triple, cpu, features}) {
            if (s.chars().anyMatch(Character::isWhitespace)) {
                throw new KilnException("CPU target field '" + s + "' contains whitespace");
            }
        }
        if (triple.isEmpty() || cpu.isEmpty()) throw new KilnException("a CPU target needs a triple and a cpu name");
        if (cores < 1) throw new KilnException("a CPU target needs at least one core, got " + cores);
        if (vectorBits < 64 || Integer.bitCount(vectorBits) != 1) {
            throw new KilnException("CPU vector width must be a power of two of at least 64 bits, got " + vectorBits);
        }
        if (cacheLineBytes < 8 || Integer.bitCount(cacheLineBytes) != 1) {
            throw new KilnException("cache line must be a power of two of at least 8 bytes, got " + cacheLineBytes);
        }
    }

    @Override
    public Kind kind() {
        return Kind.CPU;
    }

    /** How many elements of {@code bytes} bytes one vector register holds. */
    public int lanes(int bytes) {
        return Math.max(1, vectorBits / 8 / bytes);
    }

    /** The same CPU with another core count (for single-threaded measurements). */
    public CpuTarget withCores(int n) {
        return new CpuTarget(triple, cpu, features, n, vectorBits, cacheLineBytes, fastMath);
    }

    /** The same CPU with floating-point contraction (FMA) allowed or not. */
    public CpuTarget withFastMath(boolean on) {
        return new CpuTarget(triple, cpu, features, cores, vectorBits, cacheLineBytes, on);
    }

    /** The same target with the CPU name and features another source (LLVM's host detection) reports. */
    public CpuTarget withCpu(String cpuName, String featureString) {
        return new CpuTarget(triple, cpuName, featureString, cores, vectorBits, cacheLineBytes, fastMath);
    }

    /** Whether the feature string enables {@code name} (given without the plus sign). */
    public boolean hasFeature(String name) {
        for (String f : features.split(",")) if (f.equals("+" + name)) return true;
        return false;
    }

    /**
     * Whether float16 arithmetic runs in half-precision registers (AVX-512 FP16: 32 lanes a zmm); without it the
     * LLVM backend computes float16 in float32 registers, rounding after each operation.
     */
    public boolean hasNativeFloat16() {
        return hasFeature("avx512fp16");
    }

    @Override
    public String toString() {
        return "cpu -mtriple=" + triple + " -mcpu=" + cpu + (features.isEmpty() ? "" : " -mattr=" + features)
                + " -cores=" + cores + " -vector-bits=" + vectorBits + " -cache-line=" + cacheLineBytes
                + (fastMath ? " -fast-math=1" : "");
    }

    static CpuTarget fromOptions(String s, Map<String, String> opts) {
        TargetOptions o = new TargetOptions(s, opts);
        CpuTarget t = new CpuTarget(
                o.string("mtriple"),
                o.string("mcpu"),
                o.string("mattr", ""),
                o.integer("cores"),
                o.integer("vector-bits"),
                o.integer("cache-line"),
                o.integer("fast-math", 0) != 0);
        o.requireAllUsed();
        return t;
    }
}
