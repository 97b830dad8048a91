package dev.kiln.autoschedule.tune;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.ir.DType;
import dev.kiln.nn.Quant;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DynamicQuantizeLinear's parameters tuned on a fast-math target (as {@code ./kiln onnx} tunes): every program must
 * agree with the reference. Symmetric data puts the zero point {@code -lo / scale} next to 127.5, where a divide
 * relaxed to a reciprocal multiply rounded it to 127 against the reference's 128 and every trial was rejected; the
 * divides are {@code EXACT_DIV}, correctly rounded on every target.
 */
class FastMathQuantTuneTest {
    @TempDir
    Path dir;

    @Test
    void dynamicQuantParamsTuneOnAFastMathTargetWithoutWrongResults() {
        Tensor x = Te.placeholder("x", DType.FLOAT32, 128, 3072);
        ComputeDAG dag = ComputeDAG.of(Quant.dynamicQuantParams(x));
        TuneOptions o = TuneOptions.builder()
                .trials(16)
                .measuresPerRound(8)
                .seed(3)
                .logFile(dir.resolve("dq.jsonl"))
                .measureOptions(MeasureOptions.defaults()
                        .withRepeats(1)
                        .withMinRepeatMs(1)
                        .withWarmup(0)
                        .withWarmupMs(0)
                        .withRemeasure(1, 1))
                .measurers(LocalMeasurer::of)
                .progressBar(false)
                .build();
        try (TuneResult r = AutoSchedule.tune(dag, Target.cpu().withFastMath(true), o)) {
            assertThat(r.errorsByKind()).as(r.summary()).isEmpty();
        }
    }
}
