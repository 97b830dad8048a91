package dev.kiln.autoschedule.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * GPU sketch generation and annotation: the sketch counts of ansor-notes §4.5 for GPU where no
 * cross-thread reduction is involved (that rule is left out, see {@link TargetRules#cuda()}), the structure
 * of the matmul sketch (local accumulator tiled "SSSRRSRS", shared copies of both inputs at k.0),
 * and the bindings of sampled programs.
 */
class GpuSketchTest {
    static final HardwareParams H200 = HardwareParams.cuda(48 * 1024, Integer.MAX_VALUE, 1024, 8, 32);

    static SearchTask task(ComputeDAG dag) {
        return SearchTask.of(
                dag, "cuda -arch=sm_90 -max-threads-per-block=1024 -shared-memory-per-block=49152 -warp-size=32", H200);
    }

    static List<Sketch> sketches(ComputeDAG dag) {
        return TargetRules.cuda().sketches(task(dag));
    }

    @Test
    void matmul512HasOneSketchWithSharedCopiesAtTheOuterReductionTile() {
        List<Sketch> s = sketches(Workloads.matmul(512, 512, 512));
        assertThat(s).hasSize(1);
        LoopState st = s.getFirst().state();
        assertThat(st.stages().stream().map(Stage::name).toList())
                .containsExactly("A", "A.shared", "B", "B.shared", "matmul.local", "matmul");
        Stage local = st.stage(4);
        assertThat(local.iters().stream().map(Iter::name).toList())
                .containsExactly(
                        "i.0", "j.0", "i.1", "j.1", "i.2", "j.2", "k.0", "k.1", "i.3", "j.3", "k.2", "i.4", "j.4");
        assertThat(local.computeAt()).isEqualTo(ComputeAtKind.ITER);
        assertThat(st.stage(5).iters().stream().map(Iter::name).toList())
                .containsExactly("i.0", "j.0", "i.1", "j.1", "i.2", "j.2", "i.3", "j.3");
        // the local stage sits at the copy's threadIdx level (j.2), the fetches at the local stage's k.0
        assertThat(st.stage(5).iter(5).uid()).isEqualTo(local.attachIter());
        for (int fetch : new int[] {1, 3}) {
            assertThat(st.stage(fetch).attachStage()).isEqualTo(4);
            assertThat(local.iters()
                            .get(local.indexOfUid(st.stage(fetch).attachIter()))
                            .name())
                    .isEqualTo("k.0");
        }
        assertThat(s.getFirst().undecidedSplits()).isEqualTo(3);
    }

    @Test
    void sketchCountsOfTheNotesWithoutCrossThreadReduction() {
        assertThat(sketches(Workloads.conv2dBnRelu(1, 56, 56, 512, 512, 3, 1, 1)))
                .hasSize(1);
        assertThat(sketches(Workloads.maxPool2d(1, 56, 56, 512, 1))).hasSize(1);
        // Ansor: 2 / 2 / 4, one of them (three for softmax) with cross-thread reduction
        assertThat(sketches(Workloads.matmul(8, 8, 1024))).hasSize(1);
        assertThat(sketches(Workloads.minNm(10, 1024))).hasSize(1);
        assertThat(sketches(Workloads.softmaxNm(2, 1024))).hasSize(1);
    }

    @Test
    void conv2dWithPaddingInlinesThePaddingIntoItsSharedCopy() {
        List<Sketch> s = sketches(Workloads.conv2dBnRelu(1, 14, 14, 16, 16, 3, 1, 1));
        LoopState st = s.getFirst().state();
        List<String> names = st.stages().stream().map(Stage::name).toList();
        assertThat(names).contains("pad.shared", "Kernel.shared");
        assertThat(st.stage(names.indexOf("pad")).computeAt()).isEqualTo(ComputeAtKind.INLINED);
        assertThat(names).contains("conv2d_nchw.local");
        // the conv is tiled and fused into its element-wise consumer (bias, bn, relu), computed at its threadIdx level
        Stage conv = st.stage(names.indexOf("conv2d_nchw.local"));
        assertThat(conv.computeAt()).isEqualTo(ComputeAtKind.ITER);
        assertThat(st.stage(conv.attachStage()).name()).isEqualTo("relu");
    }

    @Test
    void sampledMatmulsAreBoundToBlocksVthreadsAndThreadsWithinTheLimits() {
        SearchTask t = task(Workloads.matmul(256, 256, 256));
        InitPopulation pop = TargetRules.cuda().population(t, sketches(t.dag()));
        InitPopulation.Result r = pop.sample(40, new SplittableRandom(7));
        assertThat(r.candidates()).hasSizeGreaterThan(20);
        for (Candidate c : r.candidates()) {
            LoopState st = c.state();
            Stage out = st.stage(5);
            assertThat(out.iter(0).annotation()).isEqualTo(IterAnnotation.BLOCK_X);
            assertThat(out.iter(1).annotation()).isEqualTo(IterAnnotation.VTHREAD);
            assertThat(out.iter(2).annotation()).isEqualTo(IterAnnotation.THREAD_X);
            long threads = out.iter(2).extent();
            assertThat(threads).isBetween(32L, 1024L);
            assertThat(out.iter(1).extent()).isLessThanOrEqualTo(8);
            for (int fetch : new int[] {1, 3}) {
                Stage f = st.stage(fetch);
                Iter bound = f.iters().stream()
                        .filter(it -> it.annotation() == IterAnnotation.THREAD_X)
                        .findFirst()
                        .orElseThrow();
                assertThat(bound.extent()).as("fetch threads of " + c.key()).isEqualTo(threads);
            }
        }
        System.out.println("GPU matmul sampling: " + r.stats());
    }
}
