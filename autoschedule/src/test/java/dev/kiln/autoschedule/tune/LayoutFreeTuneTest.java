package dev.kiln.autoschedule.tune;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogFormat;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operator-level tuning with layout-free weights (TuneOptions.layoutFree): the kernel reads the weight packed once
 * for its tiles and computes what the default lowering computes on the original weight (float32, rtol and atol
 * 1e-4: the packed program sums in another order); its records are keyed apart, replay and round-trip through
 * JSON; bad names are refused by name.
 */
class LayoutFreeTuneTest {
    static final CpuTarget HOST = Target.cpu();
    static final double TOL = 1e-4;
    static final MeasureOptions MEASURE =
            MeasureOptions.defaults().withRepeats(2).withMinRepeatMs(0).withTimeoutSeconds(120);

    @TempDir
    Path dir;

    /** A 3x3 conv, NHWC / HWIO, pad 1: x[1, 6, 6, 8], weight[3, 3, 8, 16]. */
    static ComputeDAG conv() {
        Tensor x = Te.placeholder("data", FLOAT32, 1, 6, 6, 8);
        Tensor w = Te.placeholder("weight", FLOAT32, 3, 3, 8, 16);
        return ComputeDAG.of(Conv.conv2dNhwc(x, w, 1, 1));
    }

    /** dense(x[16, 24], w[32, 24]) + b. */
    static ComputeDAG dense() {
        Tensor x = Te.placeholder("x", FLOAT32, 16, 24);
        Tensor w = Te.placeholder("w", FLOAT32, 32, 24);
        Tensor b = Te.placeholder("b", FLOAT32, 32);
        return ComputeDAG.of(Linalg.dense(x, w, b));
    }

    /** A register tile over j, vectorized (the weight is read across j unless packed). */
    static Schedule tiledDense(ComputeDAG dag) {
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        var mm = sb.stage("dense_matmul");
        var local = mm.cacheWrite("local");
        mm.split("i", 4);
        mm.split("j", 16);
        mm.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(mm, "j.0");
        mm.parallel(mm.fuse("i.0", "j.0"));
        local.split("k", 8);
        local.split("j", 8);
        local.reorder("k.0", "i", "j.0", "k.1", "j.1");
        local.vectorize("j.1");
        return sb.build();
    }

    /** Seeded random inputs of {@code dag} and a zero output. */
    static NDArray[] arguments(ComputeDAG dag, long seed) {
        List<Tensor> args = dag.arguments();
        NDArray[] a = new NDArray[args.size()];
        for (int i = 0; i < a.length; i++) {
            long[] shape = args.get(i).shape().toArray();
            a[i] = i < a.length - 1 ? NDArray.random(FLOAT32, seed + i, shape) : NDArray.allocate(FLOAT32, shape);
        }
        return a;
    }

    /** The output of the default lowering (original layouts) on {@code args}. */
    static NDArray reference(ComputeDAG dag, NDArray[] args) {
        NDArray[] a = args.clone();
        a[a.length - 1] =
                NDArray.allocate(FLOAT32, dag.outputs().getFirst().shape().toArray());
        try (CompiledKernel k = Backend.forTarget(HOST).compile(LowerDefault.lower("reference", dag), HOST)) {
            k.call(a);
        }
        return a[a.length - 1];
    }

    /** Runs {@code k} with the weight at {@code position} packed by {@code k}, and checks it against the reference. */
    static void checkPacked(LayoutFreeKernel k, ComputeDAG dag, String weight, int position, long seed) {
        NDArray[] args = arguments(dag, seed);
        NDArray expected = reference(dag, args);
        NDArray[] call = args.clone();
        call[position] = k.pack(weight, args[position]);
        assertThat(call[position].shape()).containsExactly(k.packedShape(weight));
        k.call(call);
        Comparison c = args[args.length - 1].compareTo(expected, TOL, TOL);
        assertThat(c.ok()).as(c.report()).isTrue();
    }

    @Test
    void aTiledDenseReadsItsWeightPackedAndComputesTheDefaultLoweringsOutput() {
        ComputeDAG dag = dense();
        SearchTask task = AutoSchedule.task(dag, HOST, List.of("w"));
        assertThat(task.layoutFree()).containsExactly(1);
        assertThat(task.workloadKey()).isEqualTo(dag.workloadKey() + " layout_free=[1]");
        try (LayoutFreeKernel k = LayoutFreeKernel.compile(dag, task, tiledDense(dag), HOST)) {
            assertThat(k.layoutFree()).containsExactly("w");
            assertThat(k.packedShape("w")).containsExactly(2, 3, 2, 8, 8);
            assertThat(k.note()).contains("'w' [j/16:2, k/8:3, (j/8)%2:2, k%8:8, j%8:8]");
            checkPacked(k, dag, "w", 1, 11);
            checkPacked(k, dag, "w", 1, 12);
        }
    }

    @Test
    void aTunedConvWithItsWeightLayoutFreeIsLoggedApartReplaysAndBuildsPacked() {
        ComputeDAG dag = conv();
        Path file = dir.resolve("conv.jsonl");
        TuneOptions options = TuneOptions.builder()
                .trials(6)
                .measuresPerRound(3)
                .seed(3)
                .logFile(file)
                .measureOptions(MEASURE)
                .measurers(LocalMeasurer::of)
                .progressBar(false)
                .layoutFree("weight")
                .build();
        assertThat(options.layoutFree()).containsExactly("weight");
        assertThat(options.toBuilder().build()).isEqualTo(options);
        SearchTask task = AutoSchedule.task(dag, HOST, List.of("weight"));
        try (TuneResult r = AutoSchedule.tune(dag, HOST, options)) {
            assertThat(r.task().workloadKey()).isEqualTo(task.workloadKey()).endsWith(" layout_free=[1]");
            assertThat(r.kernel()).isInstanceOf(LayoutFreeKernel.class);
            NDArray[] args = arguments(dag, 21);
            NDArray expected = reference(dag, args);
            NDArray[] call = args.clone();
            call[1] = r.pack("weight", args[1]);
            r.call(call);
            Comparison c = args[2].compareTo(expected, TOL, TOL);
            assertThat(c.ok()).as(c.report()).isTrue();
        }
        // every record is of the layout-free key; each replays on the task and survives a JSON round trip
        try (TuningLog log = TuningLog.open(file)) {
            assertThat(log.records()).isNotEmpty().allSatisfy(rec -> {
                assertThat(rec.workloadKey()).isEqualTo(task.workloadKey());
                LogRecord back = LogFormat.parse(LogFormat.toLine(rec));
                assertThat(back).isEqualTo(rec);
                if (rec.isValid()) assertThat(back.schedule(task).replay()).isNotNull();
            });
        }
        // built from the log without searching: the same packed program, checked again on other inputs
        try (LayoutFreeKernel k = AutoSchedule.buildLayoutFree(dag, HOST, file, "weight")) {
            checkPacked(k, dag, "weight", 1, 31);
        }
        // the plain workload has no record: its key is another
        assertThatThrownBy(() -> AutoSchedule.build(dag, HOST, file))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("cannot build workload");
    }

    @Test
    void badNamesAreRefusedByName() {
        ComputeDAG dag = conv();
        Path file = dir.resolve("none.jsonl");
        TuneOptions unknown = TuneOptions.builder()
                .trials(1)
                .progressBar(false)
                .layoutFree("wieght")
                .build();
        assertThatThrownBy(() -> AutoSchedule.tune(dag, HOST, unknown))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'wieght'")
                .hasMessageContaining("its inputs are")
                .hasMessageContaining("data");
        assertThatThrownBy(() -> AutoSchedule.task(
                        dag, HOST, List.of(dag.outputs().getFirst().name())))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("it is an output");
        assertThatThrownBy(() -> AutoSchedule.buildLayoutFree(dag, HOST, file, "nope"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'nope'");
        assertThatThrownBy(() -> AutoSchedule.buildLayoutFree(dag, HOST, file))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("no layout-free argument");
        assertThatThrownBy(() -> TuneOptions.builder().layoutFree(" "))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("empty");
        ComputeDAG d = dense();
        SearchTask task = AutoSchedule.task(d, HOST, List.of("w"));
        try (LayoutFreeKernel k = LayoutFreeKernel.compile(d, task, tiledDense(d), HOST)) {
            assertThatThrownBy(() -> k.pack("x", NDArray.allocate(FLOAT32, 16, 24)))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("'x' is not a layout-free argument");
            assertThatThrownBy(() -> k.pack("w", NDArray.allocate(FLOAT32, 24, 32)))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("'w'")
                    .hasMessageContaining("[24, 32]");
        }
    }
}
