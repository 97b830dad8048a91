package dev.kiln.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The AMX tile intrinsics as tensorize targets: a packed low-precision matmul tiled 16 x 16 x (64 bytes of the
 * reduction) around {@code tdpbf16ps} / {@code tdpbusd}, its JSON and Java round trips, the interpreter running the
 * pattern (int8 exactly, bf16 within float32 rounding of exact products), the checks, and the features asked for.
 */
class AmxTensorizeStepTest {

    /** Rows and columns by 16, the reduction by a tile's depth, the tile innermost, tensorized at its rows. */
    static Schedule amxTiled(ComputeDAG dag, String intrinsic, int depth) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        ScheduleBuilder.StageRef c = s.stage("matmul_packed");
        c.split("m", 16);
        c.split("n", 16);
        c.split("k", depth);
        c.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "k.1");
        c.tensorize("m.1", intrinsic);
        return s.build();
    }

    @Test
    void int8TilesRoundTripAndInterpretExactly() throws Exception {
        ComputeDAG dag = TensorizeStepTest.packedDense(DType.UINT8, DType.INT8, 48, 32, 192);
        Schedule sch = amxTiled(dag, AmxTensorIntrinsics.AMX_U8S8, 64);
        assertThat(sch.toJson()).contains("\"x86.amx.tdpbusd.16x16x64\"");
        TensorizeStepTest.assertRoundTripsAndInterpretsExactly(dag, sch, "m.1", AmxTensorIntrinsics.AMX_U8S8);
    }

    @Test
    void bf16TilesInterpretWithinFloat32Rounding() {
        ComputeDAG dag = TensorizeStepTest.packedDense(DType.BFLOAT16, DType.BFLOAT16, 32, 48, 96);
        PrimFunc f = Lowering.lower("amx_bf16", amxTiled(dag, AmxTensorIntrinsics.AMX_BF16, 32));
        assertThat(f.toString()).contains("tensorize$x86.amx.tdpbf16ps.16x16x32");
        NDArray x = NDArray.random(DType.BFLOAT16, 33, 32, 96);
        NDArray w = NDArray.random(DType.BFLOAT16, 34, 48, 96);
        NDArray out = NDArray.allocate(DType.FLOAT32, 32, 48);
        Interpreter.run(f, x, w, out);
        // products of bf16 values are exact in float32; only the float32 sums round
        out.assertClose(LowPrecisionData.denseFloat(x, w), 1e-5, 1e-5);
    }

    @Test
    void chainedTilesKeepTheResultAndTheChecks() throws Exception {
        // four tdpbusd chained over 256 bytes of the reduction: 65 536 tile points, checked along every loop and at
        // seeded random points
        ComputeDAG dag = TensorizeStepTest.packedDense(DType.UINT8, DType.INT8, 32, 16, 512);
        Schedule sch = amxTiled(dag, AmxTensorIntrinsics.u8s8(4), 256);
        TensorizeStepTest.assertRoundTripsAndInterpretsExactly(dag, sch, "m.1", AmxTensorIntrinsics.u8s8(4));
        assertThat(AmxTensorIntrinsics.steps(TensorIntrinsics.get(AmxTensorIntrinsics.u8s8(4))))
                .isEqualTo(4);
        assertThat(TensorizeCheck.Layout.tilePoints(List.of(16L, 16L, 256L)))
                .hasSizeLessThan(16 * 16 * 256 / 8)
                .startsWith(0)
                .contains(1, 255, 256, 16 * 256, 16 * 16 * 256 - 1);
        // an unpacked weight is still refused with the sampled check
        Tensor x = Te.placeholder("x", DType.UINT8, 16, 512);
        Tensor w = Te.placeholder("w", DType.INT8, 16, 512);
        ComputeDAG plain = ComputeDAG.of(Te.compute("matmul_packed", Te.shape(16, 16), Te.names("m", "n"), (m, n) -> {
            var k = Te.reduceAxis(512, "k");
            return Te.sum(k, x.at(m, k).cast(DType.INT32).mul(w.at(n, k).cast(DType.INT32)));
        }));
        assertThatThrownBy(() -> amxTiled(plain, AmxTensorIntrinsics.u8s8(4), 256))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("laid out differently");
    }

    @Test
    void refusesTilesThatAreNotTheInstructions() {
        ComputeDAG dag = TensorizeStepTest.packedDense(DType.BFLOAT16, DType.BFLOAT16, 32, 32, 64);
        // a reduction tile of 16 bf16 values is half a tile row (shape)
        assertThatThrownBy(() -> amxTiled(dag, AmxTensorIntrinsics.AMX_BF16, 16))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("extent 16")
                .hasMessageContaining("shape mismatch");
        // int8 operands on the bf16 instruction (pattern)
        assertThatThrownBy(() -> amxTiled(
                        TensorizeStepTest.packedDense(DType.UINT8, DType.INT8, 32, 32, 128),
                        AmxTensorIntrinsics.AMX_BF16,
                        32))
                .isInstanceOf(ScheduleException.class);
        // an unpacked weight: the same sum, but B's rows are not 16 groups of two reduction elements (layout)
        Tensor x = Te.placeholder("x", DType.BFLOAT16, 32, 64);
        Tensor w = Te.placeholder("w", DType.BFLOAT16, 32, 64);
        ComputeDAG plain = ComputeDAG.of(Te.compute("matmul_packed", Te.shape(32, 32), Te.names("m", "n"), (m, n) -> {
            var k = Te.reduceAxis(64, "k");
            return Te.sum(k, x.at(m, k).cast(DType.FLOAT32).mul(w.at(n, k).cast(DType.FLOAT32)));
        }));
        assertThatThrownBy(() -> amxTiled(plain, AmxTensorIntrinsics.AMX_BF16, 32))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("laid out differently");
    }

    @Test
    void offeredOnlyWhereTheCpuHasTiles() {
        CpuTarget amx = Target.cpu().withCpu("sapphirerapids", "+avx512f,+avx512bw,+amx-tile,+amx-bf16,+amx-int8");
        CpuTarget noAmx = Target.cpu().withCpu("znver5", "+avx512f,+avx512bw,+avx512vnni,+avx512bf16");
        assertThat(TensorIntrinsics.availableOn(amx).stream().map(TensorIntrinsic::name))
                .contains(AmxTensorIntrinsics.AMX_BF16, AmxTensorIntrinsics.AMX_U8S8);
        assertThat(TensorIntrinsics.availableOn(noAmx).stream().map(TensorIntrinsic::name))
                .doesNotContain(AmxTensorIntrinsics.AMX_BF16, AmxTensorIntrinsics.AMX_U8S8);
        assertThat(TensorIntrinsics.get(AmxTensorIntrinsics.AMX_BF16).unavailableReason(noAmx))
                .contains("amx-tile")
                .contains("amx-bf16");
        assertThat(AmxTensorIntrinsics.ALL).allMatch(AmxTensorIntrinsics::isAmx);
    }
}
