package dev.kiln.samples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.sketch.MultiLevelTilingTensorize;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.nn.Quant;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * AutoSchedule.tune on low-precision computations with no hint: the search's sketches tensorize
 * them with the CPU's dot-product instructions, and the tuned kernel's numbers match the
 * interpreter (int8 exactly, requantization epilogue included; bf16 within 1e-5 of the
 * interpreter's float32 sums, both summing exact bf16 products). Skips without the instructions.
 */
class TensorizeTuneTest {
    private static final MeasureOptions FAST = MeasureOptions.defaults()
            .withRepeats(1)
            .withMinRepeatMs(0)
            .withWarmup(0)
            .withWarmupMs(0)
            .withRemeasure(0, 0);

    private static TuneResult tune(ComputeDAG dag, CpuTarget target, LocalMeasurer m) {
        return AutoSchedule.tune(
                dag,
                target,
                TuneOptions.builder()
                        .trials(4)
                        .measuresPerRound(2)
                        .seed(7)
                        .measurer(m)
                        .build());
    }

    @Test
    void int8DenseWithRequantizeTunesOntoVnni() {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(target);
        assumeTrue(why == null, why);
        assertThat(MultiLevelTilingTensorize.offered(target)).contains(TensorIntrinsics.VNNI_U8S8);
        Tensor x = Te.placeholder("x", DType.UINT8, 8, 64);
        Tensor w = Te.placeholder("w", DType.INT8, 32, 64);
        Tensor scale = Te.placeholder("scale", DType.FLOAT32, 1);
        Tensor zero = Te.placeholder("zero", DType.UINT8, 1);
        Tensor acc = LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w));
        ComputeDAG dag = ComputeDAG.of(Quant.requantize(acc, scale, zero));
        try (LocalMeasurer m = LocalMeasurer.of(target, FAST);
                TuneResult r = tune(dag, target, m)) {
            assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
            NDArray xs = NDArray.allocate(DType.UINT8, 8, 64), ws = NDArray.allocate(DType.INT8, 32, 64);
            SplittableRandom rnd = new SplittableRandom(5);
            for (long i = 0; i < xs.numElements(); i++) xs.setLongFlat(rnd.nextInt(256), i);
            for (long i = 0; i < ws.numElements(); i++) ws.setLongFlat(rnd.nextInt(256) - 128, i);
            NDArray sc = NDArray.fromFloats(new float[] {0.0005f}, 1);
            NDArray zp = NDArray.allocate(DType.UINT8, 1);
            zp.setLongFlat(100, 0);
            NDArray out = NDArray.allocate(DType.UINT8, 8, 32), ref = NDArray.allocate(DType.UINT8, 8, 32);
            r.kernel().call(xs, ws, sc, zp, out);
            Interpreter.run(Lowering.lower("ref", r.schedule()), xs, ws, sc, zp, ref);
            assertThat(out.toLongArray()).containsExactly(ref.toLongArray());
            long distinct =
                    java.util.Arrays.stream(out.toLongArray()).distinct().count();
            assertThat(distinct).as("the requantized output is not constant").isGreaterThan(4);
        }
    }

    @Test
    void bf16DenseTunesOntoDpbf16ps() {
        CpuTarget target = Target.cpu();
        String why = TensorIntrinsics.get(TensorIntrinsics.BF16_DOT).unavailableReason(target);
        assumeTrue(why == null, why);
        Tensor x = Te.placeholder("x", DType.BFLOAT16, 4, 64);
        Tensor w = Te.placeholder("w", DType.BFLOAT16, 32, 64);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        try (LocalMeasurer m = LocalMeasurer.of(target, FAST);
                TuneResult r = tune(dag, target, m)) {
            assertThat(r.schedule().steps()).anyMatch(s -> s instanceof TensorizeStep);
            NDArray xs = NDArray.random(DType.BFLOAT16, 1, 4, 64), ws = NDArray.random(DType.BFLOAT16, 2, 32, 64);
            NDArray out = NDArray.allocate(DType.FLOAT32, 4, 32), ref = NDArray.allocate(DType.FLOAT32, 4, 32);
            r.kernel().call(xs, ws, out);
            Interpreter.run(Lowering.lower("ref", r.schedule()), xs, ws, ref);
            out.assertClose(ref, 1e-5, 1e-5);
        }
    }
}
