package dev.kiln.graph;

import static dev.kiln.graph.OpPattern.OUT_EWISE_FUSABLE;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Operator;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.Locale;

/**
 * The fusion anchors among the graph's operators: convolutions, dense and batched matmul, which take a
 * chain of elementwise epilogues into their group (TVM's {@code OUT_EWISE_FUSABLE}).
 *
 * <p>A family of {@link Op}'s records: {@code Op} extends this interface, so its records are named
 * {@code Op.Conv2d}, {@code Op.Dense}, ... as if they were declared in it (member types are inherited). Sealed,
 * with {@code Op} its only subtype: it has no members but the records, and nothing else implements it.
 */
public sealed interface AnchorOps permits Op {
    /**
     * 2-D convolution. {@code layout} "NHWC" (weight HWIO = [KH, KW, CI/groups, CO]) or "NCHW"
     * (weight OIHW); {@code pads} = [top, left, bottom, right]. Depthwise is {@code groups} = channels.
     */
    @Operator("2-D convolution, NHWC or NCHW, with strides, pads, dilations and groups (depthwise: groups = channels).")
    @OpSpec(kind = "conv2d", arity = 2, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
    record Conv2d(String layout, List<Long> strides, List<Long> pads, List<Long> dilations, long groups) implements Op {
        public Conv2d {
            strides = List.copyOf(strides);
            pads = List.copyOf(pads);
            dilations = List.copyOf(dilations);
            if (!layout.equals("NHWC") && !layout.equals("NCHW")) {
                throw new KilnException("conv2d: layout must be NHWC or NCHW, got '" + layout + "'");
            }
            if (strides.size() != 2 || pads.size() != 4 || dilations.size() != 2) {
                throw new KilnException(
                        "conv2d: needs 2 strides, 4 pads (top, left, bottom, right) and 2 dilations, got " + strides
                                + ", " + pads + ", " + dilations);
            }
            if (groups < 1) throw new KilnException("conv2d: groups must be at least 1, got " + groups);
        }

        /** Square stride and symmetric padding, dilation 1. */
        public static Conv2d of(String layout, long stride, long pad, long groups) {
            return new Conv2d(layout, List.of(stride, stride), List.of(pad, pad, pad, pad), List.of(1L, 1L), groups);
        }

        public ConvParams params() {
            return new ConvParams(
                    strides, List.of(pads.get(0), pads.get(1)), List.of(pads.get(2), pads.get(3)), dilations, groups);
        }

        public Tensor build(List<Tensor> in) {
            return layout.equals("NHWC")
                    ? Conv.conv2dNhwc(in.get(0), in.get(1), params())
                    : Conv.conv2dNchw(in.get(0), in.get(1), params());
        }

        public String attrs() {
            return layout + " strides=" + strides + " pads=" + pads
                    + (dilations.equals(List.of(1L, 1L)) ? "" : " dilations=" + dilations)
                    + (groups == 1 ? "" : " groups=" + groups);
        }
    }

    /**
     * A 3x3, stride-1 NHWC convolution by Winograd's F(m x m, 3 x 3) ({@code Winograd.conv2dNhwcTransformed}), its
     * weight already transformed to [m + 2, m + 2, CI, CO]; {@code pads} = [top, left, bottom, right]. The pass
     * {@code WinogradConvs} makes it from a {@link Conv2d} with a constant weight.
     */
    @Operator("3x3 stride-1 NHWC conv2d by Winograd F(m x m, 3 x 3), weight transformed to [m+2, m+2, CI, CO].")
    @OpSpec(kind = "conv2d_winograd", arity = 2, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
    record Conv2dWinograd(int m, List<Long> pads) implements Op {
        public Conv2dWinograd {
            pads = List.copyOf(pads);
            if (m != 2 && m != 4) throw new KilnException("conv2d_winograd: tile size m must be 2 or 4, got " + m);
            if (pads.size() != 4 || pads.stream().anyMatch(v -> v < 0))
                throw new KilnException("conv2d_winograd: needs 4 pads >= 0 (top, left, bottom, right), got " + pads);
        }

        public Tensor build(List<Tensor> in) {
            ConvParams p = ConvParams.of(2, 1, 0).withPadding2d(pads.get(0), pads.get(2), pads.get(1), pads.get(3));
            return dev.kiln.nn.Winograd.conv2dNhwcTransformed(in.get(0), in.get(1), m, p);
        }

        public String attrs() {
            return "m=" + m + " pads=" + pads;
        }
    }

    /**
     * A one-group NHWC conv2d as a GEMM over im2col rows ({@code ConvGemm.conv2dNhwcGemm}), the implicit GEMM that
     * Tensor Cores run: x [N, H, W, C] in float16 or bfloat16 (or float32), its weight the HWIO weight seen as
     * [KH * KW * C (or more: zero rows), CO] in x's type; output [rows, CO] float32, rows at least N * OH * OW (the
     * extra ones 0); {@code kernel} = [KH, KW], {@code pads} = [top, left, bottom, right]. The pass {@code
     * ToTensorCores} makes it from a {@link Conv2d} with a constant weight, followed by a slice and a reshape to
     * NHWC.
     */
    @Operator("conv2d NHWC as an implicit GEMM [rows, CO] (float32 sums of float16/bfloat16), for Tensor Cores.")
    @OpSpec(kind = "conv2d_gemm", arity = 2, pattern = OUT_EWISE_FUSABLE)
    record Conv2dGemm(List<Long> kernel, List<Long> strides, List<Long> pads, List<Long> dilations, long rows)
            implements Op {
        public Conv2dGemm {
            kernel = List.copyOf(kernel);
            strides = List.copyOf(strides);
            pads = List.copyOf(pads);
            dilations = List.copyOf(dilations);
            if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
                throw new KilnException("conv2d_gemm: needs a 2-D kernel, 2 strides, 2 dilations and 4 pads, got "
                        + kernel + ", " + strides + ", " + dilations + ", " + pads);
            if (rows < 1) throw new KilnException("conv2d_gemm: rows must be at least 1, got " + rows);
        }

        public Tensor build(List<Tensor> in) {
            ConvParams p = ConvParams.of(2, 1, 0)
                    .withStride(strides.get(0), strides.get(1))
                    .withPadding2d(pads.get(0), pads.get(2), pads.get(1), pads.get(3))
                    .withDilation(dilations.get(0), dilations.get(1));
            return dev.kiln.nn.ConvGemm.conv2dNhwcGemm(in.get(0), in.get(1), kernel.get(0), kernel.get(1), p, rows);
        }

        public String attrs() {
            return "kernel=" + kernel + " strides=" + strides + " pads=" + pads
                    + (dilations.equals(List.of(1L, 1L)) ? "" : " dilations=" + dilations) + " rows=" + rows;
        }
    }

    /**
     * A convolution of any spatial rank in a named layout ({@code Conv.conv}: e.g. data "NCL" with
     * weight "OIL", or "NCDHW" with "OIDHW", as ONNX lays out 1-D and 3-D convolutions), or, when
     * {@code transposed}, a transposed convolution ({@code ConvTranspose.convTranspose}: weight
     * "IOHW", with {@code outputPadding}).
     */
    @Operator("Convolution of any rank and layout (ONNX Conv), or a transposed convolution (ONNX ConvTranspose).")
    @OpSpec(arity = 2, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
    record ConvNd(
            String dataLayout, String kernelLayout, ConvParams params, boolean transposed, List<Long> outputPadding)
            implements Op {
        public ConvNd {
            outputPadding = List.copyOf(outputPadding);
        }

        public String kind() {
            return "conv" + params.strides().size() + "d" + (transposed ? "_transpose" : "");
        }

        public Tensor build(List<Tensor> in) {
            String name = kind() + "_" + dataLayout.toLowerCase(java.util.Locale.ROOT);
            return transposed
                    ? dev.kiln.nn.ConvTranspose.convTranspose(
                            name,
                            in.get(0),
                            in.get(1),
                            dataLayout,
                            kernelLayout,
                            params,
                            outputPadding.stream().mapToLong(Long::longValue).toArray())
                    : Conv.conv(name, in.get(0), in.get(1), dataLayout, kernelLayout, params);
        }

        public String attrs() {
            return dataLayout + "/" + kernelLayout + " strides=" + params.strides() + " pads=" + params.padBefore()
                    + params.padAfter()
                    + " dilations=" + params.dilations() + (params.groups() == 1 ? "" : " groups=" + params.groups())
                    + (outputPadding.stream().allMatch(p -> p == 0) ? "" : " output_padding=" + outputPadding);
        }
    }

    /** {@code out[n, u] = sum_k x[n, k] * w[u, k]}: x [N, K], w [units, K]. */
    @Operator("`out[n, u] = sum_k x[n, k] * w[u, k]` for x [N, K] and w [units, K].")
    @OpSpec(kind = "dense", arity = 2, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
    record Dense() implements Op {
        public Tensor build(List<Tensor> in) {
            return Linalg.dense(in.get(0), in.get(1));
        }
    }

    /**
     * Batched matmul of [B, M, K] x [B, K, N], either operand optionally transposed in its last two axes; each
     * product and the sum in {@code accumulate} (null: the operands' type), as {@code ToBfloat16} writes attention's
     * products: bfloat16 operands, float32 sums.
     */
    @Operator("Batched matmul [B, M, K] x [B, K, N], either operand optionally transposed.")
    @OpSpec(kind = "batch_matmul", arity = 2, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
    record BatchMatmul(boolean transposeA, boolean transposeB, DType accumulate) implements Op {
        /** In the operands' type. */
        public BatchMatmul(boolean transposeA, boolean transposeB) {
            this(transposeA, transposeB, null);
        }

        public Tensor build(List<Tensor> in) {
            DType acc = accumulate == null ? in.get(0).dtype() : accumulate;
            return Linalg.batchMatmul(in.get(0), in.get(1), transposeA, transposeB, acc);
        }

        public String attrs() {
            String t = (transposeA ? "transA " : "") + (transposeB ? "transB" : "");
            if (accumulate == null) return t;
            return (t.isEmpty() || t.endsWith(" ") ? t : t + " ") + "acc="
                    + accumulate.name().toLowerCase(Locale.ROOT);
        }
    }
}
