package dev.kiln.jit;

import dev.kiln.ir.DType;
import java.util.List;

/**
 * {@code exp}, {@code erf}, {@code tanh} and {@code sigmoid} on float registers, written as straight-line
 * LLVM IR so that they vectorize. LLVM has no vector form of these functions without a vector math library:
 * {@code llvm.exp.v16f32} becomes sixteen calls of libm's {@code expf}, and {@code erff} is a libm call per
 * lane: the GELU epilogue of a BERT layer's 768 -> 3072 dense layer was 393,216 scalar {@code erff} calls.
 * Double-precision values keep the libm calls.
 *
 * <p>Accuracy, float32 against the double result rounded to float, on the half million points of
 * {@code FastMathTest} (whole ranges, subnormal results, overflow, the switch points): {@code exp} at
 * most 1 ulp (Cephes' reduction {@code x = n ln 2 + r} with a two-part {@code ln 2} and its degree-7
 * polynomial; the scale {@code 2^n} applied in two halves so that subnormal results come out right),
 * {@code erf} 2 ulp (its Taylor series to {@code x^23} below 1, {@code 1 - erfc} above with Numerical
 * Recipes' Chebyshev fit of erfc), {@code tanh} 1 ulp (its odd Taylor series to {@code x^19} below
 * 0.55, {@code (1 - e^{-2|x|}) / (1 + e^{-2|x|})} above), {@code sigmoid} 2 ulp ({@code 1 / (1 + e^-x)},
 * {@code e^x / (1 + e^x)} for negative x, so it never overflows). NaN in gives NaN out.
 */
final class FastMath {
    private static final DType F = DType.FLOAT32;
    private static final DType I = DType.INT32;

    private final CodeGen g;

    private FastMath(CodeGen g) {
        this.g = g;
    }

    /** Whether {@code t} is computed in a float register (float32, float16, bfloat16). */
    static boolean applies(DType t) {
        return IrTypes.reg(t).equals("float");
    }

    static Val exp(CodeGen g, Val x) {
        FastMath m = new FastMath(g);
        return m.keepNaN(x, m.expOf(m.asFloat(x)));
    }

    static Val erf(CodeGen g, Val x) {
        FastMath m = new FastMath(g);
        return m.erfOf(m.asFloat(x));
    }

    static Val tanh(CodeGen g, Val x) {
        FastMath m = new FastMath(g);
        return m.tanhOf(m.asFloat(x));
    }

    static Val sigmoid(CodeGen g, Val x) {
        FastMath m = new FastMath(g);
        Val xf = m.asFloat(x);
        // e = e^-|x| <= 1 never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below (subnormal results stay exact)
        Val e = m.expOf(m.neg(g.intrinsic("llvm.fabs", F, List.of(xf))));
        Val pos = g.op2("fdiv", c(1), m.add(c(1), e), F);
        Val s = g.select(g.op2("fcmp oge", xf, c(0), DType.BOOL), pos, m.mul(e, pos));
        return m.keepNaN(xf, s);
    }

    // ---- the functions -------------------------------------------------------------------------

    /** e^x for finite x and +-inf; NaN lanes give poison here (the callers select x back for them). */
    private Val expOf(Val x) {
        // clamp: e^89 overflows and e^-104 is below half the smallest subnormal (NaN compares false, stays)
        Val xc = g.select(g.op2("fcmp ogt", x, c(89), DType.BOOL), c(89), x);
        xc = g.select(g.op2("fcmp olt", xc, c(-104), DType.BOOL), c(-104), xc);
        Val n = g.intrinsic("llvm.roundeven", F, List.of(mul(xc, c(1.44269504088896341))));
        Val r = fma(n, c(-0.693359375), xc); // ln 2 in two parts: n * hi is exact for |n| < 2^9
        r = fma(n, c(2.12194440e-4), r);
        Val p = horner(
                r,
                1.9875691500E-4,
                1.3981999507E-3,
                8.3334519073E-3,
                4.1665795894E-2,
                1.6666665459E-1,
                5.0000001201E-1);
        Val y = add(fma(p, mul(r, r), r), c(1));
        if (!n.isUniform() && g.target.hasFeature("avx512f")) return scalef(y, n);
        // 2^n = 2^(n >> 1) * 2^(n - (n >> 1)): each half is a normal float for n in [-151, 130]
        Val ni = g.convert("fptosi", n, "i32", I);
        Val n1 = g.op2("ashr", ni, ci(1), I);
        Val n2 = g.op2("sub", ni, n1, I);
        return mul(mul(y, pow2(n1)), pow2(n2));
    }

    private Val erfOf(Val x) {
        Val ax = g.intrinsic("llvm.fabs", F, List.of(x));
        // |x| < 1: the Taylor series x * sum c_k x^2k; |x| >= 1: 1 - erfc(|x|) with its sign
        Val small = mul(x, horner(mul(x, x), ERF_TAYLOR));
        Val big = g.op2("fsub", c(1), erfc(ax), F);
        big = g.intrinsic("llvm.copysign", F, List.of(big, x));
        return keepNaN(x, g.select(g.op2("fcmp olt", ax, c(1), DType.BOOL), small, big));
    }

    /**
     * erfc(z) for z >= 0 within 1.2e-7 relative (the Chebyshev fit {@code erfcc} of Numerical Recipes):
     * t e^{-z^2 + P(t)}, t = 1 / (1 + z / 2). For z >= 1 erfc is at most 0.16, so erf = 1 - erfc is
     * within 2e-8 absolute.
     */
    private Val erfc(Val z) {
        Val t = g.op2("fdiv", c(1), fma(z, c(0.5), c(1)), F);
        Val p = horner(
                t,
                0.17087277,
                -0.82215223,
                1.48851587,
                -1.13520398,
                0.27886807,
                -0.18628806,
                0.09678418,
                0.37409196,
                1.00002368,
                -1.26551223);
        return mul(t, expOf(g.op2("fsub", p, mul(z, z), F)));
    }

    private Val tanhOf(Val x) {
        Val ax = g.intrinsic("llvm.fabs", F, List.of(x));
        // |x| < 0.55: the odd Taylor series x + x^3 sum c_k x^2k
        Val x2 = mul(x, x);
        Val small = fma(mul(x, x2), horner(x2, TANH_TAYLOR), x);
        // |x| >= 0.55: (1 - e) / (1 + e) with e = e^{-2|x|} <= 1/3, so 1 - e does not cancel
        Val e = expOf(neg(add(ax, ax)));
        Val big = g.op2("fdiv", g.op2("fsub", c(1), e, F), add(c(1), e), F);
        big = g.intrinsic("llvm.copysign", F, List.of(big, x));
        return keepNaN(x, g.select(g.op2("fcmp olt", ax, c(0.55), DType.BOOL), small, big));
    }

    /** erf's Taylor coefficients 2/sqrt(pi) (-1)^k / (k! (2k + 1)), k = 11 down to 0 (truncation < 1e-10 at 1). */
    private static final double[] ERF_TAYLOR = erfTaylor(12);

    /**
     * tanh's Taylor coefficients of x^19, x^17, ..., x^3: 2^2n (2^2n - 1) B_2n / (2n)! for n = 10 down
     * to 2 (B the Bernoulli numbers); the series converges for |x| < pi/2 and the first omitted term
     * is below 1e-9 relative at 0.55.
     */
    private static final double[] TANH_TAYLOR = {
        -443861162.0 / 1856156927625.0,
        6404582.0 / 10854718875.0,
        -929569.0 / 638512875.0,
        21844.0 / 6081075.0,
        -1382.0 / 155925.0,
        62.0 / 2835.0,
        -17.0 / 315.0,
        2.0 / 15.0,
        -1.0 / 3.0
    };

    private static double[] erfTaylor(int terms) {
        double[] c = new double[terms];
        double factorial = 1;
        for (int k = 0; k < terms; k++) {
            if (k > 0) factorial *= k;
            c[terms - 1 - k] = (k % 2 == 0 ? 1 : -1) * 2 / Math.sqrt(Math.PI) / (factorial * (2 * k + 1));
        }
        return c;
    }

    // ---- pieces ----------------------------------------------------------------------------------

    /** The float value of {@code x}'s register (float16 and bfloat16 are held as float). */
    private static Val asFloat(Val x) {
        return new Val(x.form(), x.ref(), 0, F);
    }

    /** {@code x} where it is NaN, else {@code y}. */
    private Val keepNaN(Val x, Val y) {
        return g.select(g.op2("fcmp uno", x, x, DType.BOOL), x, y);
    }

    /**
     * {@code y * 2^n} for integral float {@code n} by AVX-512's {@code vscalefps}, one instruction per 16 lanes where
     * the exponent-bit form takes nine (a conversion, shifts, adds and two multiplies); it rounds once, so subnormal
     * results come out right and overflow gives infinity. The vector of {@code lanes} floats is cut into zmm-sized
     * pieces (the last one padded), each scaled by LLVM's x86 intrinsic, and put back together: LLVM has no generic
     * form ({@code llvm.ldexp} becomes a libm call per lane on x86).
     */
    private Val scalef(Val y, Val n) {
        int lanes = g.lanes, padded = (lanes + 15) / 16 * 16;
        String vt = g.vty(F), pt = IrTypes.vec("float", padded), zt = IrTypes.vec("float", 16);
        String vy = g.vector(y), vn = g.vector(n);
        if (padded != lanes) {
            vy = g.fn.emit("shufflevector " + vt + " " + vy + ", " + vt + " poison, " + mask(padded, 0, lanes));
            vn = g.fn.emit("shufflevector " + vt + " " + vn + ", " + vt + " poison, " + mask(padded, 0, lanes));
        }
        String name = "llvm.x86.avx512.mask.scalef.ps.512";
        g.mod.declare(name, zt, zt + ", " + zt + ", " + zt + ", i16, i32");
        String acc = null;
        for (int c = 0; c < padded; c += 16) {
            String ay = padded == 16
                    ? vy
                    : g.fn.emit("shufflevector " + pt + " " + vy + ", " + pt + " poison, " + mask(16, c, 16));
            String an = padded == 16
                    ? vn
                    : g.fn.emit("shufflevector " + pt + " " + vn + ", " + pt + " poison, " + mask(16, c, 16));
            // rounding argument 4: the current direction (MXCSR), as the plain instruction
            String r = g.fn.emit("call " + zt + " @" + name + "(" + zt + " " + ay + ", " + zt + " " + an + ", " + zt
                    + " zeroinitializer, i16 -1, i32 4)");
            if (padded == 16) {
                acc = r;
                continue;
            }
            String wide = g.fn.emit("shufflevector " + zt + " " + r + ", " + zt + " poison, " + mask(padded, 0, 16));
            if (acc == null) {
                acc = wide;
                continue;
            }
            StringBuilder m = new StringBuilder("<");
            for (int l = 0; l < padded; l++) {
                int from = l >= c && l < c + 16 ? padded + l - c : l;
                m.append(l == 0 ? "" : ", ").append("i32 ").append(from);
            }
            acc = g.fn.emit("shufflevector " + pt + " " + acc + ", " + pt + " " + wide + ", "
                    + IrTypes.vec("i32", padded) + " " + m + ">");
        }
        if (padded != lanes) {
            acc = g.fn.emit("shufflevector " + pt + " " + acc + ", " + pt + " poison, " + mask(lanes, 0, lanes));
        }
        return Val.varying(acc, F);
    }

    /** A shuffle mask of {@code size} lanes taking {@code count} lanes from {@code from} on, then poison. */
    private static String mask(int size, int from, int count) {
        StringBuilder m = new StringBuilder(IrTypes.vec("i32", size) + " <");
        for (int l = 0; l < size; l++) {
            m.append(l == 0 ? "" : ", ").append("i32 ").append(l < count ? String.valueOf(from + l) : "poison");
        }
        return m.append('>').toString();
    }

    /** 2^k for k in [-126, 127] as a float, from its exponent bits. */
    private Val pow2(Val k) {
        Val bits = g.op2("shl", g.op2("add", k, ci(127), I), ci(23), I);
        return g.convert("bitcast", bits, "float", F);
    }

    /** c[0] r^(n-1) + ... + c[n-1], by Horner's rule with fused multiply-adds where the target has them. */
    private Val horner(Val r, double... c) {
        Val p = c(c[0]);
        for (int i = 1; i < c.length; i++) p = fma(p, r, c(c[i]));
        return p;
    }

    private Val fma(Val a, Val b, Val c) {
        return g.intrinsic("llvm.fmuladd", F, List.of(a, b, c));
    }

    private Val mul(Val a, Val b) {
        return g.op2("fmul", a, b, F);
    }

    private Val add(Val a, Val b) {
        return g.op2("fadd", a, b, F);
    }

    private Val neg(Val a) {
        return Casts.unary(g, "fneg", a);
    }

    private static Val c(double v) {
        return Val.uniform(IrTypes.floatConst(F, v), F);
    }

    private static Val ci(long v) {
        return Val.uniform(IrTypes.intConst(I, v), I);
    }
}
