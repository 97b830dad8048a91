package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;

/**
 * bfloat16 and int8 matmul, dense and conv2d in the layouts the CPU's dot-product instructions read
 * (AVX-512 VNNI: u8 x s8 -> s32 over groups of 4; AVX-512 BF16: bf16 pairs -> f32): the weight is
 * packed once ({@code pack*}: a constant's layout, computed at build time by a network) so that 16
 * output channels' {@code group} consecutive reduction elements are adjacent, and the computation
 * reads it there. The accumulator is int32 for 8-bit operands and float32 for bfloat16; the int8
 * epilogue (bias, {@link Quant#requantize}) is a consumer stage the schedule fuses. Every such
 * computation is what the tensorize step's {@code x86.avx512.*} intrinsics match; on any other
 * target it is an ordinary computation.
 */
public final class LowPrecision {
    private LowPrecision() {}

    /** Output channels per packed block (one 512-bit register of 32-bit accumulators). */
    public static final int LANES = 16;

    /** Reduction elements per 32-bit lane: 4 for 8-bit types, 2 for bfloat16 and float16. */
    public static int group(DType t) {
        return switch (t) {
            case UINT8, INT8 -> 4;
            case BFLOAT16, FLOAT16 -> 2;
            default -> throw new KilnException("low-precision ops take uint8/int8 or bfloat16 operands, got " + t);
        };
    }

    /** The accumulator of operands of type {@code t}: int32 for 8-bit types, float32 for 16-bit floats. */
    public static DType accumulator(DType t) {
        return t.isInt() ? DType.INT32 : DType.FLOAT32;
    }

    /**
     * {@code w [units, K]} (a dense weight) packed to {@code [units/16, K/g, 16, g]}:
     * {@code p[a, b, c, d] = w[16 a + c, g b + d]}.
     */
    @Operator("a dense weight `[units, K]` packed to `[units/16, K/g, 16, g]` for the dot-product instructions")
    public static Tensor packDenseWeight(Tensor w) {
        Axes.requireRank("pack_dense_weight", w, 2);
        int g = group(w.dtype());
        long units = w.dim(0), k = w.dim(1);
        requireMultiple("pack_dense_weight", w, 0, units, LANES);
        requireMultiple("pack_dense_weight", w, 1, k, g);
        return Te.computeN(
                "packed_" + w.name(),
                "layout_pack",
                Shape.of(units / LANES, k / g, LANES, g),
                i -> w.at(i.get(0).mul(LANES).add(i.get(2)), i.get(1).mul(g).add(i.get(3))));
    }

    /** {@code b [K, N]} (a matmul's right operand) packed to {@code [N/16, K/g, 16, g]}. */
    @Operator("a matmul right operand `[K, N]` packed to `[N/16, K/g, 16, g]` for the dot-product instructions")
    public static Tensor packMatmulWeight(Tensor b) {
        Axes.requireRank("pack_matmul_weight", b, 2);
        int g = group(b.dtype());
        long k = b.dim(0), n = b.dim(1);
        requireMultiple("pack_matmul_weight", b, 1, n, LANES);
        requireMultiple("pack_matmul_weight", b, 0, k, g);
        return Te.computeN(
                "packed_" + b.name(),
                "layout_pack",
                Shape.of(n / LANES, k / g, LANES, g),
                i -> b.at(i.get(1).mul(g).add(i.get(3)), i.get(0).mul(LANES).add(i.get(2))));
    }

    /**
     * {@code out[m, n] = sum_k acc(x[m, k]) * acc(p[n/16, k/g, n%16, k%g])} for {@code x [M, K]} and a
     * weight packed by {@link #packDenseWeight} or {@link #packMatmulWeight}: dense and matmul alike.
     * uint8 x int8 (or int8 x int8) accumulate in int32, bfloat16 x bfloat16 in float32.
     */
    @Operator("int8 (u8 x s8 -> s32) or bf16 (-> f32) matmul/dense on a packed weight (tensorizable)")
    public static Tensor matmulPacked(Tensor x, Tensor packed) {
        String op = "matmul_packed";
        Axes.requireRank(op, x, 2);
        Axes.requireRank(op, packed, 4);
        int g = group(x.dtype());
        checkPair(op, x, packed);
        if (packed.dim(2) != LANES || packed.dim(3) != g || packed.dim(1) * g != x.dim(1)) {
            throw new KilnException(op + ": packed weight " + Axes.describe(packed) + " must be [N/16, " + x.dim(1) / g
                    + ", 16, " + g + "] for input " + Axes.describe(x));
        }
        DType acc = accumulator(x.dtype());
        long k = x.dim(1);
        return Te.computeN(op, "matmul", Shape.of(x.dim(0), packed.dim(0) * LANES), Te.names("m", "n"), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            IterVar m = idx.get(0), n = idx.get(1);
            Expr w = packed.at(n.floordiv(LANES), r.floordiv(g), n.floormod(LANES), r.floormod(g));
            return Te.sum(r, x.at(m, r).cast(acc).mul(w.cast(acc)));
        });
    }

    /**
     * A conv2d weight {@code [KH, KW, IC, OC]} (HWIO) packed to {@code [OC/16, KH, KW, IC/g, 16, g]}.
     */
    @Operator("an HWIO conv2d weight packed to `[OC/16, KH, KW, IC/g, 16, g]` for the dot-product instructions")
    public static Tensor packConv2dWeight(Tensor w) {
        Axes.requireRank("pack_conv2d_weight", w, 4);
        int g = group(w.dtype());
        long kh = w.dim(0), kw = w.dim(1), ic = w.dim(2), oc = w.dim(3);
        requireMultiple("pack_conv2d_weight", w, 3, oc, LANES);
        requireMultiple("pack_conv2d_weight", w, 2, ic, g);
        return Te.computeN(
                "packed_" + w.name(),
                "layout_pack",
                Shape.of(oc / LANES, kh, kw, ic / g, LANES, g),
                i -> w.at(
                        i.get(1),
                        i.get(2),
                        i.get(3).mul(g).add(i.get(5)),
                        i.get(0).mul(LANES).add(i.get(4))));
    }

    /**
     * Direct NHWC conv2d without padding (pad the input first, with {@link Pad}, at root) of
     * {@code x [N, H, W, IC]} with a weight packed by {@link #packConv2dWeight}:
     * {@code out[n, h, w, o] = sum_{r, s, c} acc(x[n, h*stride + r, w*stride + s, c])
     * * acc(p[o/16, r, s, c/g, o%16, c%g])},
     * the channel reduction being the instruction's dot product.
     */
    @Operator("int8 or bf16 direct NHWC conv2d (no padding) on a packed weight (tensorizable)")
    public static Tensor conv2dPacked(Tensor x, Tensor packed, int stride) {
        String op = "conv2d_packed";
        Axes.requireRank(op, x, 4);
        Axes.requireRank(op, packed, 6);
        if (stride < 1) throw new KilnException(op + ": stride " + stride + " must be >= 1");
        int g = group(x.dtype());
        checkPair(op, x, packed);
        long ic = x.dim(3), kh = packed.dim(1), kw = packed.dim(2);
        if (packed.dim(4) != LANES || packed.dim(5) != g || packed.dim(3) * g != ic) {
            throw new KilnException(op + ": packed weight " + Axes.describe(packed) + " must be [OC/16, KH, KW, "
                    + ic / g + ", 16, " + g + "] for input " + Axes.describe(x));
        }
        long oh = (x.dim(1) - kh) / stride + 1, ow = (x.dim(2) - kw) / stride + 1;
        if (oh < 1 || ow < 1) {
            throw new KilnException(
                    op + ": input " + Axes.describe(x) + " is smaller than the " + kh + "x" + kw + " window");
        }
        DType acc = accumulator(x.dtype());
        return Te.computeN(
                op, "conv2d", Shape.of(x.dim(0), oh, ow, packed.dim(0) * LANES), Te.names("b", "h", "w", "o"), idx -> {
                    IterVar r = Te.reduceAxis(kh, "ry");
                    IterVar s = Te.reduceAxis(kw, "rx");
                    IterVar c = Te.reduceAxis(ic, "rc");
                    IterVar n = idx.get(0), h = idx.get(1), w = idx.get(2), o = idx.get(3);
                    Expr xv = x.at(n, h.mul(stride).add(r), w.mul(stride).add(s), c);
                    Expr wv = packed.at(o.floordiv(LANES), r, s, c.floordiv(g), o.floormod(LANES), c.floormod(g));
                    return Te.sum(java.util.List.of(r, s, c), xv.cast(acc).mul(wv.cast(acc)));
                });
    }

    private static void checkPair(String op, Tensor x, Tensor w) {
        boolean ints = (x.dtype() == DType.UINT8 || x.dtype() == DType.INT8) && w.dtype() == DType.INT8;
        boolean bf = x.dtype() == DType.BFLOAT16 && w.dtype() == DType.BFLOAT16;
        if (!ints && !bf) {
            throw new KilnException(op + ": takes uint8/int8 x int8 or bfloat16 x bfloat16, got tensor "
                    + Axes.describe(x) + " of " + x.dtype() + " and tensor " + Axes.describe(w) + " of " + w.dtype());
        }
    }

    private static void requireMultiple(String op, Tensor t, int axis, long extent, int of) {
        if (extent % of != 0) {
            throw new KilnException(op + ": axis " + axis + " of tensor " + Axes.describe(t) + " has extent " + extent
                    + ", not a multiple of " + of);
        }
    }
}
