package dev.kiln.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.lower.Lowering;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Schedules are data: replay, JSON round trip, Java source, printouts. */
class ScheduleDataTest {

    static Schedule tiledMatmulRelu(ComputeDAG dag) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var C = s.stage("C");
        var local = C.cacheWrite("local");
        C.computeInline();
        var D = s.stage("D");
        D.split("i", 4, 2);
        D.split("j", 8);
        D.reorder("i.0", "j.0", "i.1", "i.2", "j.1");
        local.computeAt(D, "j.0");
        local.split("k", 4);
        D.parallel(D.fuse("i.0", "j.0"));
        D.vectorize("j.1");
        local.autoUnrollMaxStep("i", 16);
        return s.build();
    }

    @Test
    void jsonRoundTripGivesAnEqualSchedule() {
        ComputeDAG dag = Workloads.matmulRelu(32, 48, 20);
        Schedule sch = tiledMatmulRelu(dag);
        String json = sch.toJson();
        assertThat(json)
                .doesNotContain("\n")
                .contains("\"format\":\"kiln-schedule-1\"")
                .contains("[\"SP\",");
        Schedule back = Schedule.fromJson(json, dag);
        assertThat(back).isEqualTo(sch);
        assertThat(back.toJson()).isEqualTo(json);
    }

    @Test
    void replayOnAFreshlyBuiltDagGivesTheSameLoops() {
        Schedule sch = tiledMatmulRelu(Workloads.matmulRelu(32, 48, 20));
        ComputeDAG fresh = Workloads.matmulRelu(32, 48, 20);
        Schedule again = Schedule.fromJson(sch.toJson(), fresh);
        assertThat(again.replay().toString()).isEqualTo(sch.replay().toString());
        assertThat(Lowering.lower("f", again).toString())
                .isEqualTo(Lowering.lower("f", sch).toString());
    }

    @Test
    void statePrintoutShowsTheLoopStructure() {
        String s = tiledMatmulRelu(Workloads.matmulRelu(32, 48, 20)).replay().toString();
        assertThat(s)
                .startsWith("Placeholder: A, B\n")
                .contains("parallel i.0@j.0@ (0,24)")
                .contains("C.local auto_unroll: 16")
                .contains("vectorize j.1 (0,8)");
    }

    @Test
    void jsonFromAnotherWorkloadIsRefused() {
        Schedule sch = tiledMatmulRelu(Workloads.matmulRelu(32, 48, 20));
        ScheduleException e = assertThrows(
                ScheduleException.class, () -> Schedule.fromJson(sch.toJson(), Workloads.matmulRelu(32, 48, 24)));
        assertThat(e.getMessage()).contains("made for workload");
    }

    @Test
    void undecidedLengthsSurviveTheRoundTrip() {
        ComputeDAG dag = Workloads.matmul(16, 16, 16);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("C").split("i", null, 4);
        Schedule sch = s.build();
        assertThat(sch.replay().isConcrete()).isFalse();
        assertThat(Schedule.fromJson(sch.toJson(), dag)).isEqualTo(sch);
        assertThat(sch.toJson()).contains("[null,4]");
        assertThrows(ScheduleException.class, () -> Lowering.lower("f", sch));
    }

    @Test
    void everyStepKindRoundTripsThroughJson() {
        ComputeDAG dag = Workloads.matmulRelu(16, 16, 32);
        List<Step> steps = List.of(
                new SplitStep(2, 0, 16L, java.util.Arrays.asList(4, null), true),
                new FollowSplitStep(3, 0, 0, 2),
                new FollowFusedSplitStep(3, 1, List.of(0), 1, true),
                new FuseStep(3, List.of(0, 1)),
                new ReorderStep(2, List.of(1, 0, 2, 3, 4)),
                new ComputeAtStep(2, 3, 1),
                new ComputeInlineStep(2),
                new ComputeRootStep(2),
                new CacheReadStep(0, "shared", List.of(2)),
                new CacheWriteStep(2, "local"),
                new RfactorStep(2, 3, 1),
                new AnnotationStep(3, 0, IterAnnotation.THREAD_X),
                new PragmaStep(2, 0, "auto_unroll_max_step$64"),
                new StorageAlignStep(2, 0, 32, 1),
                new StorageBlockStep(2, 1, 0));
        Schedule sch = new Schedule(dag, steps);
        // not a legal schedule (fromJson would replay and refuse it): the record format alone round-trips
        assertThat(Schedule.fromSteps(sch.stepsJson(), dag).steps()).isEqualTo(steps);
    }
}
