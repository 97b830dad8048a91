package dev.kiln.autoschedule.tune;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.search.StopReason;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small real tunes of a matmul on this machine with the LLVM backend: the default measurer (a
 * child JVM) and the in-process one. Every measurement is a real time (or a recorded error), the
 * best program computes the right product, and the log builds it again.
 */
class EndToEndTuneTest {
    static final CpuTarget HOST = Target.cpu();
    /** Short timing: each program is checked against the interpreter, then timed 3 times for at least 1 ms. */
    static final MeasureOptions QUICK = MeasureOptions.defaults()
            .withRepeats(3)
            .withMinRepeatMs(1)
            .withWarmup(0)
            .withWarmupMs(0)
            .withRemeasure(1, 1);

    @TempDir
    Path dir;

    @Test
    void tuneInAChildJvmThenBuildFromTheLog() {
        Path file = dir.resolve("matmul.jsonl");
        ComputeDAG dag = Workloads.matmul(32, 24, 40);
        TuneOptions o = TuneOptions.builder()
                .trials(8)
                .measuresPerRound(4)
                .seed(3)
                .logFile(file)
                .measureOptions(QUICK)
                .progressBar(false)
                .build();
        try (TuneResult r = AutoSchedule.tune(dag, HOST, o)) {
            check(r, dag, file, 8);
            try (CompiledKernel k = AutoSchedule.build(Workloads.matmul(32, 24, 40), HOST, file)) {
                AutoScheduleTest.checkMatmul(k, 32, 24, 40, 77);
            }
        }
    }

    @Test
    void tuneInThisProcess() {
        Path file = dir.resolve("local.jsonl");
        ComputeDAG dag = Workloads.matmul(20, 36, 28);
        TuneOptions o = TuneOptions.builder()
                .trials(6)
                .measuresPerRound(3)
                .seed(4)
                .logFile(file)
                .measureOptions(QUICK)
                .measurers(LocalMeasurer::of)
                .progressBar(false)
                .build();
        try (TuneResult r = AutoSchedule.tune(dag, HOST, o)) {
            check(r, dag, file, 6);
        }
    }

    /** The pure-JVM backend measures like any backend: candidates compiled to bytecode in the child JVM. */
    @Test
    void tuneOnThePureJvmBackend() {
        Path file = dir.resolve("jvm.jsonl");
        CpuTarget jvm = Target.jvm();
        ComputeDAG dag = Workloads.matmul(24, 32, 16);
        TuneOptions o = TuneOptions.builder()
                .trials(6)
                .measuresPerRound(3)
                .seed(5)
                .logFile(file)
                .measureOptions(QUICK)
                .progressBar(false)
                .build();
        try (TuneResult r = AutoSchedule.tune(dag, jvm, o)) {
            assertThat(r.trials()).isEqualTo(6);
            List<LogRecord> records = TuningLog.open(file).records();
            assertThat(records).allSatisfy(rec -> assertThat(rec.target()).isEqualTo(jvm.toString()));
            assertThat(records.stream().filter(rec -> !rec.isRemeasure())).hasSize(6);
            assertThat(records.stream().filter(LogRecord::isValid).count()).isPositive();
            assertThat(r.kernel().getClass().getName()).contains("jvm");
            AutoScheduleTest.checkMatmul(r.kernel(), 24, 32, 16, 93);
        }
    }

    static void check(TuneResult r, ComputeDAG dag, Path file, int trials) {
        assertThat(r.trials()).isEqualTo(trials);
        assertThat(r.stopReason()).isEqualTo(StopReason.TRIAL_BUDGET);
        List<LogRecord> all = TuningLog.open(file).records();
        List<LogRecord> records = all.stream().filter(rec -> !rec.isRemeasure()).toList();
        assertThat(records).hasSize(trials);
        // QUICK re-measures the fastest program once before the result is reported (at most 3 times if the best
        // changes)
        assertThat(all.size() - trials).isBetween(1, 3);
        assertThat(all).allSatisfy(rec -> {
            assertThat(rec.target()).isEqualTo(HOST.toString());
            if (rec.isValid()) {
                assertThat(rec.costs())
                        .hasSize(3)
                        .allSatisfy(c -> assertThat(c).isPositive().isLessThan(1.0));
                assertThat(rec.compileSeconds()).isPositive();
            } else {
                assertThat(rec.errorMessage()).isNotEmpty();
            }
            assertThat(rec.wallSeconds()).isPositive();
        });
        var best = TuningLog.open(file).lookup(dag.workloadKey(), HOST.toString());
        assertThat(r.seconds()).isEqualTo(best.bestSeconds());
        assertThat(r.schedule()).isEqualTo(best.best().orElseThrow().schedule(dag));
        assertThat(all.stream()
                        .filter(rec ->
                                rec.steps().equals(best.best().orElseThrow().steps()))
                        .count())
                .as("the reported best was measured again (unless 3 re-measures each moved the best)")
                .isBetween(1L, 2L);
        assertThat(r.gflops()).isPositive();
        AutoScheduleTest.checkMatmul(
                r.kernel(),
                (int) dag.outputs().getFirst().dim(0),
                (int) dag.outputs().getFirst().dim(1),
                (int) dag.inputs().getFirst().dim(1),
                91);
    }
}
