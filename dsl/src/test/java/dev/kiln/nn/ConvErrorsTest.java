package dev.kiln.nn;

import static dev.kiln.ir.DType.FLOAT16;
import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.KilnException;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad arguments to the convolution and pooling operators name the operator, tensor and axis at fault. */
class ConvErrorsTest {

    private static String message(Executable e) {
        return assertThrows(KilnException.class, e).getMessage();
    }

    private final Tensor data = placeholder("data", FLOAT32, 1, 7, 5, 4);
    private final Tensor weight = placeholder("w", FLOAT32, 3, 3, 4, 6);

    @Test
    void wrongRankOfTheInput() {
        Tensor bad = placeholder("data", FLOAT32, 1, 2, 3);
        assertThat(message(() -> Conv.conv2dNhwc(bad, weight, 1, 0)))
                .isEqualTo("conv2d_nhwc: input 'data' must have rank 4 (N, H, W, C), got [1, 2, 3]");
        assertThat(message(() -> Conv.conv1dNlc(data, placeholder("k", FLOAT32, 3, 4, 2), 1, 0)))
                .isEqualTo("conv1d_nlc: input 'data' must have rank 3 (N, L, C), got [1, 7, 5, 4]");
        assertThat(message(() -> Pool.maxPool2dNchw(bad, 2, 2, 0)))
                .isEqualTo("max_pool2d_nchw: input 'data' must have rank 4 (N, C, H, W), got [1, 2, 3]");
    }

    @Test
    void wrongRankOfTheWeight() {
        Tensor bad = placeholder("w", FLOAT32, 3, 3, 4);
        assertThat(message(() -> Conv.conv2dNchw(placeholder("x", FLOAT32, 1, 4, 7, 5), bad, 1, 0)))
                .isEqualTo("conv2d_nchw: weight 'w' must have rank 4 (O, I, H, W), got [3, 3, 4]");
    }

    @Test
    void channelMismatchNamesBothTensorsAndAxes() {
        Tensor w = placeholder("w", FLOAT32, 3, 3, 3, 6);
        String m = message(() -> Conv.conv2dNhwc(data, w, 1, 0));
        assertThat(m)
                .contains("conv2d_nhwc")
                .contains("input 'data' axis 3 (C) has 4 channels")
                .contains("weight 'w' axis 2 (I) has 3");
        Tensor grouped = placeholder("w", FLOAT32, 3, 3, 4, 6);
        String g = message(
                () -> Conv.conv2dNhwc(data, grouped, ConvParams.of(2, 1, 0).withGroups(2)));
        assertThat(g)
                .contains("weight 'w' axis 2 (I) has 4")
                .contains("groups 2")
                .contains("4 / 2 = 2");
    }

    @Test
    void groupsMustDivideTheChannels() {
        Tensor w = placeholder("w", FLOAT32, 3, 3, 1, 6);
        assertThat(message(() -> Conv.conv2dNhwc(data, w, ConvParams.of(2, 1, 0).withGroups(3))))
                .contains("groups 3 does not divide the 4 input channels of input 'data' axis 3 (C)");
        Tensor w2 = placeholder("w", FLOAT32, 3, 3, 2, 5);
        assertThat(message(
                        () -> Conv.conv2dNhwc(data, w2, ConvParams.of(2, 1, 0).withGroups(2))))
                .contains("groups 2 does not divide the 5 output channels of weight 'w' axis 3 (O)");
        assertThat(message(() ->
                        Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, 0).withGroups(0))))
                .contains("groups must be positive, got 0");
    }

    @Test
    void nonPositiveStrideOrDilationAndNegativePadding() {
        assertThat(message(() ->
                        Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, 0).withStride(1, 0))))
                .isEqualTo("conv2d_nhwc: stride along W must be positive, got 0");
        assertThat(message(() -> Conv.conv2dNchw(
                        placeholder("x", FLOAT32, 1, 4, 7, 5),
                        placeholder("w", FLOAT32, 6, 4, 3, 3),
                        ConvParams.of(2, 1, 0).withDilation(-1, 1))))
                .isEqualTo("conv2d_nchw: dilation along H must be positive, got -1");
        assertThat(message(() ->
                        Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, 0).withPadding2d(0, 0, -1, 0))))
                .isEqualTo("conv2d_nhwc: padding along W must be non-negative, got -1 before and 0 after");
        assertThat(message(
                        () -> Pool.avgPool2dNhwc(data, PoolParams.of(2, 2, 1, 0).withStride(0), true)))
                .isEqualTo("avg_pool2d_nhwc: stride along H must be positive, got 0");
        assertThat(message(() -> Pool.maxPool2dNhwc(data, PoolParams.of(2, 0, 1, 0))))
                .isEqualTo("max_pool2d_nhwc: kernel size along H must be positive, got 0");
    }

    @Test
    void outputSizeMustBePositive() {
        Tensor big = placeholder("w", FLOAT32, 3, 7, 4, 6);
        assertThat(message(() -> Conv.conv2dNhwc(data, big, 1, 0)))
                .contains("conv2d_nhwc: output size along W would be")
                .contains("padded input 5 + 0 + 0 = 5")
                .contains("dilated kernel extent 7");
        assertThat(message(() ->
                        Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, 0).withDilation(4))))
                .contains("output size along H would be -1")
                .contains("padded input 7 + 0 + 0 = 7")
                .contains("extent 9 (kernel 3, dilation 4)");
        assertThat(message(() -> Pool.maxPool2dNchw(placeholder("x", FLOAT32, 1, 1, 2, 2), 3, 1, 0)))
                .contains("max_pool2d_nchw: output size along H would be 0");
        assertThat(message(() -> ConvTranspose.conv2dTransposeNhwc(
                        placeholder("x", FLOAT32, 1, 2, 2, 4), placeholder("w", FLOAT32, 2, 2, 4, 3), 1, 2)))
                .contains("conv2d_transpose_nhwc: output size along H would be -1");
        assertThat(message(() -> ConvOutput.size("op", "X", 4, 5, 1, 0, 0, 1)))
                .contains("op: output size along X would be 0");
    }

    @Test
    void dtypeMismatch() {
        Tensor half = placeholder("w", FLOAT16, 3, 3, 4, 6);
        assertThat(message(() -> Conv.conv2dNhwc(data, half, 1, 0)))
                .contains("input 'data' is float32 but weight 'w' is float16");
        assertThat(message(() -> Pool.avgPool2dNchw(placeholder("ints", INT32, 1, 2, 4, 4), 2, 2, 0, false)))
                .contains("avg_pool2d_nchw: input 'ints' is int32");
    }

    @Test
    void depthwiseChannelsAndGroups() {
        Tensor w = placeholder("dw", FLOAT32, 3, 3, 3, 2);
        assertThat(message(() -> Conv.depthwiseConv2dNhwc(data, w, 1, 1)))
                .contains("depthwise_conv2d_nhwc: input 'data' axis 3 (C) "
                        + "has 4 channels but weight 'dw' axis 2 (C) has 3");
        Tensor ok = placeholder("dw", FLOAT32, 3, 3, 4, 1);
        assertThat(message(() -> Conv.depthwiseConv2dNhwc(
                        data, ok, ConvParams.of(2, 1, 0).withGroups(4))))
                .contains("leave groups at 1");
    }

    @Test
    void transposedConvChecks() {
        Tensor x = placeholder("x", FLOAT32, 1, 4, 4, 4);
        Tensor w = placeholder("w", FLOAT32, 3, 3, 4, 2);
        assertThat(message(() -> ConvTranspose.conv2dTransposeNhwc(x, w, ConvParams.of(2, 2, 1), 2)))
                .contains("output padding along H is 2")
                .contains("smaller than the stride (2)");
        Tensor w3 = placeholder("w", FLOAT32, 3, 3, 3, 2);
        assertThat(message(() -> ConvTranspose.conv2dTransposeNhwc(x, w3, 2, 1)))
                .contains("input 'x' axis 3 (C) has 4 channels but weight 'w' axis 2 (I) has 3");
        assertThat(message(() -> ConvTranspose.conv2dTransposeNchw(
                        placeholder("x", FLOAT32, 1, 3, 4, 4),
                        placeholder("w", FLOAT32, 3, 2, 3, 3),
                        ConvParams.of(2, 1, 0).withGroups(2))))
                .contains("groups 2 does not divide the 3 input channels of input 'x' axis 1 (C)");
    }

    @Test
    void capsuleChecks() {
        Tensor x = placeholder("caps", FLOAT32, 1, 5, 5, 2, 3, 4);
        Tensor w = placeholder("w", FLOAT32, 3, 3, 2, 2, 4, 4);
        assertThat(message(() -> CapsuleConv.conv2dCapsuleNhwijc(x, w, 1, 1)))
                .contains("capsule axes of input 'caps' (axes 3 and 4) must be equal");
        Tensor x2 = placeholder("caps", FLOAT32, 1, 5, 5, 2, 2, 4);
        Tensor w2 = placeholder("w", FLOAT32, 3, 3, 2, 2, 3, 4);
        assertThat(message(() -> CapsuleConv.conv2dCapsuleNhwijc(x2, w2, 1, 1)))
                .contains("input 'caps' axis 5 (C) has 4 channels but weight 'w' axis 4 (I) has 3");
    }

    @Test
    void paramsOfTheWrongSpatialRank() {
        assertThat(message(() -> Conv.conv2dNhwc(data, weight, ConvParams.of(3, 1, 0))))
                .contains("conv2d_nhwc: the params give 3 spatial axes but the operator has 2 (H, W)");
        assertThat(message(() -> ConvParams.of(2, 1, 0).withStride(1, 2, 3)))
                .contains("stride has 3 value(s), expected one per spatial axis (2)");
    }
}
