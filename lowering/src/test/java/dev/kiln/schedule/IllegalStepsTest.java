package dev.kiln.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.te.ComputeDAG;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** An illegal step throws before anything runs, naming the step and the reason. */
class IllegalStepsTest {
    private final ComputeDAG dag = Workloads.matmulRelu(16, 24, 8);

    private static String message(Executable e) {
        return assertThrows(ScheduleException.class, e).getMessage();
    }

    @Test
    void splitByZero() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("C").split("i", 0)))
                .contains("step 0 split(C, i, [0])")
                .contains("split by 0");
    }

    @Test
    void vectorizeALoopWithoutConstantExtent() {
        var s = ScheduleBuilder.on(dag);
        s.stage("C").split("i", (Integer) null);
        assertThat(message(() -> s.stage("C").vectorize("i.1")))
                .contains("vectorize(C, i.1)")
                .contains("not a constant");
    }

    @Test
    void fuseLoopsThatAreNotAdjacent() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("C").fuse("i", "k")))
                .contains("fuse(C, [0, 2])")
                .contains("not adjacent");
    }

    @Test
    void computeAtALoopThatDoesNotEncloseTheConsumer() {
        ComputeDAG chain = chain();
        var s = ScheduleBuilder.on(chain);
        // B is read by C; computing B inside D does not put it around C.
        assertThat(message(() -> s.stage("B").computeAt("D", "i")))
                .contains("compute_at(B -> D, i)")
                .contains("does not enclose 'C'");
    }

    @Test
    void rfactorOfANonReductionLoop() {
        var s = ScheduleBuilder.on(dag);
        s.stage("C").split("k", 4);
        assertThat(message(() -> s.stage("C").rfactor("i", 0)))
                .contains("rfactor(C, i")
                .contains("not a reduction loop");
    }

    @Test
    void rfactorOfAnUnsplitReduction() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("C").rfactor("k", 0))).contains("only reduction loop");
    }

    @Test
    void parallelOnAReductionLoopRaces() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("C").parallel("k")))
                .contains("parallel(C, k)")
                .contains("race");
    }

    @Test
    void annotateTwice() {
        var s = ScheduleBuilder.on(dag);
        s.stage("D").parallel("i");
        assertThat(message(() -> s.stage("D").vectorize("i"))).contains("already annotated parallel");
    }

    @Test
    void computeAtOfAnOutputAndInlineOfAReduction() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("D").computeAt("C", "i")))
                .contains("output")
                .contains("root");
        assertThat(message(() -> s.stage("C").computeInline())).contains("reduction");
    }

    @Test
    void reorderThatIsNotAPermutation() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("C").reorder("i", "j"))).contains("not a permutation");
    }

    @Test
    void cacheWriteAfterSplit() {
        var s = ScheduleBuilder.on(dag);
        s.stage("C").split("i", 4);
        assertThat(message(() -> s.stage("C").cacheWrite("local")))
                .contains("cache_write(C")
                .contains("cache_write it first");
    }

    @Test
    void unknownPragmaScopeAndThreadAxis() {
        var s = ScheduleBuilder.on(dag);
        assertThat(message(() -> s.stage("C").pragma("i", "unroll_everything"))).contains("unknown pragma");
        assertThat(message(() -> s.stage("C").cacheWrite("texture"))).contains("unknown memory scope 'texture'");
        assertThrows(dev.kiln.ir.KilnException.class, () -> s.stage("C").bind("i", "warpIdx.x"));
    }

    @Test
    void badIndicesInRawSteps() {
        Schedule bad = new Schedule(dag, List.of(new SplitStep(9, 0, null, List.of(4), true)));
        assertThat(message(bad::replay)).contains("step 0").contains("no stage 9");
        Schedule bad2 = new Schedule(dag, List.of(new AnnotationStep(2, 7, IterAnnotation.PARALLEL)));
        assertThat(message(bad2::replay)).contains("no loop 7");
        Schedule bad3 = new Schedule(dag, List.of(new SplitStep(0, 0, null, List.of(4), true)));
        assertThat(message(bad3::replay)).contains("placeholder");
    }

    @Test
    void unknownLoopNameListsTheLoops() {
        var s = ScheduleBuilder.on(dag);
        assertThat(assertThrows(dev.kiln.ir.KilnException.class, () -> s.stage("C")
                                .split("x", 2))
                        .getMessage())
                .contains("no loop named 'x'")
                .contains("[i, j, k]");
    }

    /** A = input, B = A*2, C = B+1, D = C*3. */
    static ComputeDAG chain() {
        var A = dev.kiln.te.Te.placeholder("A", dev.kiln.ir.DType.FLOAT32, 8);
        var B = dev.kiln.te.Te.compute(
                "B", dev.kiln.te.Te.shape(8), i -> A.at(i).mul(2.0));
        var C = dev.kiln.te.Te.compute(
                "C", dev.kiln.te.Te.shape(8), i -> B.at(i).add(1.0));
        var D = dev.kiln.te.Te.compute(
                "D", dev.kiln.te.Te.shape(8), i -> C.at(i).mul(3.0));
        return ComputeDAG.of(D);
    }
}
