package dev.kiln.autoschedule.measure;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Linalg;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.schedule.layout.PackedLayout;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A task with layout-free arguments (a dense layer's constant weight) is measured on the program
 * that reads the weight packed for its loops: the measured program's parameter has the packed
 * shape, the workload hands it the packed values of the same seeded weight, so the interpreter's
 * reference (computed on the original layout) checks it exactly as any other program; the cost
 * model's features describe that packed program.
 */
class LayoutFreeMeasureTest {
    static final MeasureOptions OPTIONS =
            MeasureOptions.defaults().withRepeats(2).withMinRepeatMs(0).withTimeoutSeconds(120);

    /** dense(x[16, 24], w[32, 24]) + b: the stage "dense_matmul" (i, j, reduce k), w read as w[j, k]. */
    static ComputeDAG dense() {
        Tensor x = Te.placeholder("x", FLOAT32, 16, 24);
        Tensor w = Te.placeholder("w", FLOAT32, 32, 24);
        Tensor b = Te.placeholder("b", FLOAT32, 32);
        return ComputeDAG.of(Linalg.dense(x, w, b));
    }

    /** A register tile over j, vectorized: the weight is read across j (stride 24) unless packed. */
    static Schedule tiled(ComputeDAG dag) {
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

    static SearchTask task(ComputeDAG dag) {
        return SearchTask.cpu(dag, HardwareParams.cpu(2, 64, 64)).withLayoutFree(List.of(1));
    }

    /** A lowerer that keeps the shapes of the programs it made. */
    static final class Recording implements ScheduleLowerer {
        final List<long[]> weightShapes = new ArrayList<>();

        @Override
        public PrimFunc lower(SearchTask task, Schedule schedule) {
            PrimFunc f = Lowering.lower(FUNCTION_NAME, schedule);
            weightShapes.add(f.params().get(1).constShape());
            return f;
        }
    }

    @Test
    void theTaskIsKeyedApartAndChecksItsPositions() {
        ComputeDAG dag = dense();
        SearchTask t = task(dag);
        assertThat(t.layoutFree()).containsExactly(1);
        assertThat(t.workloadKey()).isEqualTo(dag.workloadKey() + " layout_free=[1]");
        assertThat(t.withLayoutFree(List.of())).isSameAs(t);
        SearchTask plain = SearchTask.cpu(dag, HardwareParams.cpu(2, 64, 64));
        assertThatThrownBy(() -> plain.withLayoutFree(List.of(3)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("argument 3")
                .hasMessageContaining("not an input");
        assertThatThrownBy(() -> SearchTask.of(dag, Target.cuda(), HardwareParams.cpu(2, 64, 64))
                        .withLayoutFree(List.of(1)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("CPU targets");
        // the packed program: w[32, 24] read by the tile loops j/16, k/8, (j/8)%2, k%8, j%8
        LayoutRewrite.Result r = t.rewriteLayouts(tiled(dag));
        assertThat(r.transform(1).orElseThrow().layout().toString())
                .isEqualTo("[j/16:2, k/8:3, (j/8)%2:2, k%8:8, j%8:8]");
        assertThat(plain.rewriteLayouts(tiled(dag)).rewritten()).isFalse();
    }

    @Test
    void localMeasurementRunsThePackedProgramAndChecksIt() {
        ComputeDAG dag = dense();
        Recording lowerer = new Recording();
        try (LocalMeasurer m = LocalMeasurer.of(Target.cpu(), OPTIONS, lowerer)) {
            List<MeasureResult> rs = m.measure(task(dag), List.of(tiled(dag), Schedule.empty(dag)));
            assertThat(rs).allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
        }
        // the tiled program read the weight packed; the untiled one keeps its layout (its loops already walk w[j, k])
        assertThat(lowerer.weightShapes.get(0)).containsExactly(2, 3, 2, 8, 8);
        assertThat(lowerer.weightShapes.get(1)).containsExactly(32, 24);
    }

    @Test
    void theWorkerProcessRunsThePackedProgramAndChecksIt() throws Exception {
        ComputeDAG dag = dense();
        Recording lowerer = new Recording();
        ProcessMeasurer m = ProcessMeasurer.builder(Target.cpu())
                .options(OPTIONS)
                .lowerer(lowerer)
                .start();
        try {
            List<MeasureResult> rs = m.measure(task(dag), List.of(tiled(dag)));
            assertThat(rs).allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
            assertThat(lowerer.weightShapes.getFirst()).containsExactly(2, 3, 2, 8, 8);
        } finally {
            m.close();
            Fixtures.deleteTree(m.tempDir());
        }
    }

    @Test
    void aPackedWorkloadPacksTheSameValues() {
        ComputeDAG dag = dense();
        LayoutRewrite.Result r = task(dag).rewriteLayouts(tiled(dag));
        PackedLayout layout = r.transform(1).orElseThrow().layout();
        PrimFunc packedProgram = Lowering.lower("f", r.schedule());
        List<ArgumentSpec> specs = new ArrayList<>();
        PrimFunc plain = Lowering.lower("g", Schedule.empty(dag));
        for (int i = 0; i < plain.params().size(); i++)
            specs.add(ArgumentSpec.of(plain.params().get(i), i < 3));
        try (Workload w = new Workload(specs, 7, List.of())) {
            var args = w.packed(Map.of(1, layout)).allocate(packedProgram.params());
            try (var expected = layout.apply(w.inputs().get(1))) {
                assertThat(args[1].shape()).containsExactly(2, 3, 2, 8, 8);
                args[1].assertClose(expected, 0, 0);
                args[0].assertClose(w.inputs().get(0), 0, 0);
            } finally {
                Arrays.stream(args).forEach(a -> a.close());
            }
            assertThatThrownBy(() -> w.packed(Map.of(3, layout)))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("argument 3")
                    .hasMessageContaining("not an input");
            assertThatThrownBy(() -> w.packed(Map.of(0, layout)))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("argument 0 'x'")
                    .hasMessageContaining("[16, 24]");
            // the unpacked program handed to a packed view: the parameter's shape is named
            assertThatThrownBy(() -> w.packed(Map.of(1, layout)).allocate(plain.params()))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("packed is float32[2, 3, 2, 8, 8]");
        }
    }

    @Test
    void theLayoutsTravelInTheMeasureRequest() {
        ComputeDAG dag = dense();
        LayoutRewrite.Result r = task(dag).rewriteLayouts(tiled(dag));
        Map<Integer, PackedLayout> layouts = r.layouts();
        String line = WorkerProtocol.measureRequest(
                1, "cpu", "/tmp/w.bin", OPTIONS, Lowering.lower("f", r.schedule()), layouts);
        assertThat(WorkerProtocol.layouts(WorkerProtocol.parse(line))).isEqualTo(layouts);
        String none = WorkerProtocol.measureRequest(
                2, "cpu", "/tmp/w.bin", OPTIONS, Lowering.lower("f", Schedule.empty(dag)));
        assertThat(WorkerProtocol.layouts(WorkerProtocol.parse(none))).isEmpty();
    }

    @Test
    void theCostModelSeesThePackedProgram() {
        ComputeDAG dag = dense();
        SearchTask packed = task(dag);
        SearchTask plain = SearchTask.cpu(dag, HardwareParams.cpu(2, 64, 64));
        Candidate c = Candidate.of(tiled(dag));
        ProgramFeatures fp = FeatureExtractor.of(packed).extract(c);
        ProgramFeatures fo = FeatureExtractor.of(plain).extract(c);
        assertThat(fp.rows()).isEqualTo(fo.rows()).isPositive();
        // the same loops and arithmetic; the weight's access (stride, reuse, lines) differs
        assertThat(fp.values()).isNotEqualTo(fo.values());
        // and they are exactly the features of the rewritten program
        Candidate rewritten = Candidate.of(packed.rewriteLayouts(c.schedule()).schedule());
        assertThat(FeatureExtractor.of(plain).extract(rewritten).values()).isEqualTo(fp.values());
    }
}
