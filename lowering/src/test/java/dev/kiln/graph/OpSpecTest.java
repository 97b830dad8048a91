package dev.kiln.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.ConvParams;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Each graph op's kind, arity, fusion pattern, weight inputs and printed attributes, pinned. */
class OpSpecTest {

    /** One or more instances of every op, covering the attributes that change the kind or the printout. */
    static List<Op> samples() {
        List<Op> ops = new ArrayList<>();
        ops.add(Op.Conv2d.of("NHWC", 2, 1, 1));
        ops.add(new Op.Conv2d("NCHW", List.of(1L, 2L), List.of(0L, 1L, 0L, 1L), List.of(2L, 2L), 4));
        ops.add(new Op.Conv2dWinograd(4, List.of(1L, 1L, 2L, 1L)));
        ops.add(new Op.Conv2dGemm(List.of(3L, 3L), List.of(1L, 1L), List.of(1L, 1L, 1L, 1L), List.of(1L, 1L), 48));
        ConvParams p1 = new ConvParams(List.of(2L), List.of(1L), List.of(0L), List.of(1L), 1);
        ConvParams p2 = new ConvParams(List.of(2L, 2L), List.of(1L, 1L), List.of(1L, 1L), List.of(1L, 2L), 2);
        ops.add(new Op.ConvNd("NCL", "OIL", p1, false, List.of(0L)));
        ops.add(new Op.ConvNd("NCHW", "IOHW", p2, true, List.of(1L, 0L)));
        ops.add(new Op.Dense());
        ops.add(new Op.BatchMatmul(false, false));
        ops.add(new Op.BatchMatmul(true, true));
        ops.add(new Op.MaxPool2d("NHWC", 3, 2, 1));
        ops.add(new Op.AvgPool2d("NCHW", 2, 2, 0, true));
        ops.add(new Op.PoolNd(
                "NCDHW",
                true,
                List.of(2L, 2L, 2L),
                List.of(1L, 2L, 2L),
                List.of(0L, 0L, 0L, 1L, 1L, 1L),
                List.of(1L, 1L, 1L),
                false));
        ops.add(new Op.PoolNd("NCL", false, List.of(3L), List.of(1L), List.of(1L, 1L), List.of(2L), true));
        ops.add(new Op.GlobalPool("NCHW", true));
        ops.add(new Op.GlobalPool("NCL", false));
        ops.add(new Op.GlobalAvgPool2d("NHWC"));
        ops.add(new Op.Mean(List.of(1, 2), true));
        ops.add(new Op.Mean(List.of(0), false));
        ops.add(new Op.Softmax(-1));
        ops.add(new Op.LayerNorm(1, 1e-5));
        ops.add(new Op.BatchNorm(1, 1e-3));
        ops.add(new Op.BiasAdd(3));
        for (Op.BinaryKind k : Op.BinaryKind.values()) ops.add(new Op.Binary(k));
        for (Op.UnaryKind k : Op.UnaryKind.values()) ops.add(new Op.Unary(k));
        ops.add(new Op.Clip(0, 6));
        ops.add(new Op.Reshape(List.of(1L, -1L)));
        ops.add(new Op.Transpose(List.of(0, 2, 1)));
        ops.add(new Op.StridedSlice(List.of(0L, 1L), List.of(1L, 2L), List.of(4L, 3L)));
        ops.add(new Op.Concat(1));
        ops.add(new Op.Cast(DType.INT8));
        ops.add(new Op.Quantize());
        ops.add(new Op.DynamicQuantParams());
        ops.add(new Op.Dequantize());
        ops.add(new Op.Requantize());
        ops.add(new Op.DenseInteger());
        ops.add(new Op.MatmulPacked());
        ops.add(new Op.Conv2dPacked(2, List.of(1L, 0L, 1L, 0L), 128));
        ops.add(new Op.Take(0));
        ops.add(new Op.Where());
        ops.add(new Op.BroadcastTo(List.of(2L, 3L)));
        return ops;
    }

    static String row(Op op) {
        return op.getClass().getSimpleName() + " " + op.kind() + " " + op.arity() + " " + op.pattern() + " "
                + op.weightInputs() + "\n  '" + op.attrs() + "'";
    }

    /** Taken from the records before {@link OpSpec} replaced their kind(), arity(), pattern() and weightInputs(). */
    static final String PINNED = """
            Conv2d conv2d 2 OUT_EWISE_FUSABLE [1]
              'NHWC strides=[2, 2] pads=[1, 1, 1, 1]'
            Conv2d conv2d 2 OUT_EWISE_FUSABLE [1]
              'NCHW strides=[1, 2] pads=[0, 1, 0, 1] dilations=[2, 2] groups=4'
            Conv2dWinograd conv2d_winograd 2 OUT_EWISE_FUSABLE [1]
              'm=4 pads=[1, 1, 2, 1]'
            Conv2dGemm conv2d_gemm 2 OUT_EWISE_FUSABLE []
              'kernel=[3, 3] strides=[1, 1] pads=[1, 1, 1, 1] rows=48'
            ConvNd conv1d 2 OUT_EWISE_FUSABLE [1]
              'NCL/OIL strides=[2] pads=[1][0] dilations=[1]'
            ConvNd conv2d_transpose 2 OUT_EWISE_FUSABLE [1]
              'NCHW/IOHW strides=[2, 2] pads=[1, 1][1, 1] dilations=[1, 2] groups=2 output_padding=[1, 0]'
            Dense dense 2 OUT_EWISE_FUSABLE [1]
              ''
            BatchMatmul batch_matmul 2 OUT_EWISE_FUSABLE [1]
              ''
            BatchMatmul batch_matmul 2 OUT_EWISE_FUSABLE [1]
              'transA transB'
            MaxPool2d max_pool2d 1 COMM_REDUCE []
              'NHWC kernel=3 stride=2 pad=1'
            AvgPool2d avg_pool2d 1 COMM_REDUCE []
              'NCHW kernel=2 stride=2 pad=0'
            PoolNd max_pool3d 1 COMM_REDUCE []
              'NCDHW kernel=[2, 2, 2] strides=[1, 2, 2] pads=[0, 0, 0, 1, 1, 1]'
            PoolNd avg_pool1d 1 COMM_REDUCE []
              'NCL kernel=[3] strides=[1] pads=[1, 1] dilations=[2] count_include_pad'
            GlobalPool global_max_pool 1 COMM_REDUCE []
              'NCHW'
            GlobalPool global_avg_pool 1 COMM_REDUCE []
              'NCL'
            GlobalAvgPool2d global_avg_pool2d 1 COMM_REDUCE []
              'NHWC'
            Mean mean 1 COMM_REDUCE []
              'axes=[1, 2] keepdims'
            Mean mean 1 COMM_REDUCE []
              'axes=[0]'
            Softmax softmax 1 COMM_REDUCE []
              'axis=-1'
            LayerNorm layer_norm 3 COMM_REDUCE []
              'axes=1 eps=1.0E-5'
            BatchNorm batch_norm 5 BROADCAST []
              'axis=1 eps=0.001'
            BiasAdd bias_add 2 BROADCAST []
              'axis=3'
            Binary add 2 BROADCAST []
              ''
            Binary subtract 2 BROADCAST []
              ''
            Binary multiply 2 BROADCAST []
              ''
            Binary divide 2 BROADCAST []
              ''
            Binary maximum 2 BROADCAST []
              ''
            Binary minimum 2 BROADCAST []
              ''
            Binary power 2 BROADCAST []
              ''
            Binary equal 2 BROADCAST []
              ''
            Binary less 2 BROADCAST []
              ''
            Binary less_equal 2 BROADCAST []
              ''
            Binary greater 2 BROADCAST []
              ''
            Binary greater_equal 2 BROADCAST []
              ''
            Binary and 2 BROADCAST []
              ''
            Binary or 2 BROADCAST []
              ''
            Binary xor 2 BROADCAST []
              ''
            Unary relu 1 ELEMWISE []
              ''
            Unary sigmoid 1 ELEMWISE []
              ''
            Unary tanh 1 ELEMWISE []
              ''
            Unary gelu 1 ELEMWISE []
              ''
            Unary gelu_tanh 1 ELEMWISE []
              ''
            Unary erf 1 ELEMWISE []
              ''
            Unary sqrt 1 ELEMWISE []
              ''
            Unary not 1 ELEMWISE []
              ''
            Clip clip 1 ELEMWISE []
              '[0.0, 6.0]'
            Reshape reshape 1 INJECTIVE []
              '[1, -1]'
            Transpose transpose 1 INJECTIVE []
              '[0, 2, 1]'
            StridedSlice strided_slice 1 INJECTIVE []
              'begin=[0, 1] step=[1, 2] size=[4, 3]'
            Concat concat -1 INJECTIVE []
              'axis=1'
            Cast cast 1 ELEMWISE []
              'to=int8'
            Quantize quantize 3 BROADCAST []
              ''
            DynamicQuantParams dynamic_qparams 1 COMM_REDUCE []
              ''
            Dequantize dequantize 3 BROADCAST []
              ''
            Requantize requantize 3 BROADCAST []
              ''
            DenseInteger dense_integer 4 OUT_EWISE_FUSABLE [1]
              ''
            MatmulPacked matmul_packed 2 OUT_EWISE_FUSABLE []
              ''
            Conv2dPacked conv2d_packed 2 OUT_EWISE_FUSABLE []
              'stride=2 pads=[1, 0, 1, 0] pad_value=128'
            Take take 2 INJECTIVE []
              'axis=0'
            Where where 3 BROADCAST []
              ''
            BroadcastTo broadcast_to 1 BROADCAST []
              '[2, 3]'
            """;

    @Test
    void kindsAritiesPatternsWeightsAndAttributesArePinned() {
        String actual = samples().stream().map(OpSpecTest::row).collect(Collectors.joining("\n"));
        assertEquals(PINNED.strip(), actual);
    }

    @Test
    void everyOpCarriesASpecAndAKindFromItOrItsOwnMethod() throws Exception {
        List<Class<?>> covered =
                samples().stream().<Class<?>>map(Object::getClass).distinct().toList();
        assertEquals(List.of(Op.class.getPermittedSubclasses()), covered, "samples() has every op, in permits order");
        for (Class<?> c : Op.class.getPermittedSubclasses()) {
            OpSpec spec = c.getAnnotation(OpSpec.class);
            assertNotNull(spec, c.getSimpleName() + " carries no @OpSpec");
            boolean ownKind = c.getMethod("kind").getDeclaringClass() == c;
            assertTrue(
                    spec.kind().isEmpty() == ownKind,
                    c.getSimpleName() + ": the kind comes either from @OpSpec or from kind(), exactly one");
            assertTrue(spec.arity() == -1 || spec.arity() >= 1, c.getSimpleName() + ": arity " + spec.arity());
            for (int w : spec.weightInputs()) {
                assertTrue(w >= 0 && (spec.arity() == -1 || w < spec.arity()), c.getSimpleName() + ": weight " + w);
            }
        }
    }

    /** A record without {@code kind} in its spec that forgot to override kind(): the error names it. */
    @OpSpec(arity = 1, pattern = OpPattern.ELEMWISE)
    record NoKind() {}

    @Test
    void aMissingKindOrSpecIsAnErrorNamingTheRecord() {
        KilnException e =
                assertThrows(KilnException.class, () -> OpSpecs.of(NoKind.class).requireKind());
        assertTrue(e.getMessage().contains("NoKind") && e.getMessage().contains("override kind()"), e.getMessage());
        e = assertThrows(KilnException.class, () -> OpSpecs.of(String.class));
        assertEquals("graph op String carries no @OpSpec", e.getMessage());
    }
}
