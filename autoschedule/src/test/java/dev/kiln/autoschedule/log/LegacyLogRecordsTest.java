package dev.kiln.autoschedule.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tuning logs written before the search task held a typed {@link Target} still load: the three
 * records in {@code written-at-bd5c2d8.jsonl} were written by main's code at bd5c2d8 (when a task's
 * target was a string) for a 64x64x64 matmul on the znver5 target of the logs under kiln-bench/,
 * the same task with its weight layout-free, and on the H200. A task built the typed way records
 * the byte-identical target string and hardware, finds those records, replays their programs,
 * and writes the byte-identical line for the same measurement.
 */
class LegacyLogRecordsTest {
    /** The target of the real tuning logs under kiln-bench/ (an AMD Zen 5 with AVX-512, 2 cores). */
    static final String ZNVER5 =
            "cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=znver5 -mattr=+sse3,+ssse3,+sse4.1,+sse4.2,"
                    + "+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+movbe,+avx512f,+avx512dq,+avx512cd,+avx512bw,"
                    + "+avx512vl,+avx512ifma,"
                    + "+avx512vbmi,+avx512vbmi2,+avx512vnni,+avx512bitalg,+avx512vpopcntdq,+avx512bf16,"
                    + "+avxvnni,+gfni,+vaes,+vpclmulqdq"
                    + " -cores=2 -vector-bits=512 -cache-line=64";

    /** The measurement every golden record holds. */
    static final MeasureResult MEASURED =
            new MeasureResult(new double[] {1.25e-5, 1.5e-5}, MeasureError.NONE, "", 0.25, 0.5, 1767225600000L);

    @TempDir
    Path dir;

    static List<String> goldenLines() throws IOException {
        try (InputStream in = LegacyLogRecordsTest.class.getResourceAsStream("written-at-bd5c2d8.jsonl")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    /** The tasks of the golden records, built the typed way, in the file's order. */
    static List<SearchTask> tasks(ComputeDAG dag) {
        SearchTask cpu = SearchTask.of(dag, Target.parse(ZNVER5));
        return List.of(cpu, cpu.withLayoutFree(List.of(1)), SearchTask.of(dag, CudaTarget.h200()));
    }

    @Test
    void typedTasksWriteTheTargetStringsOfOldLogs() throws IOException {
        ComputeDAG dag = Workloads.matmul(64, 64, 64);
        List<String> lines = goldenLines();
        List<SearchTask> tasks = tasks(dag);
        assertThat(lines).hasSize(tasks.size());
        assertThat(tasks.getFirst().targetDescription()).isEqualTo(ZNVER5);
        for (int i = 0; i < lines.size(); i++) {
            SearchTask task = tasks.get(i);
            LogRecord old = LogFormat.parse(lines.get(i));
            assertThat(old.target()).as("record %d", i).isEqualTo(task.targetDescription());
            assertThat(old.workloadKey()).as("record %d", i).isEqualTo(task.workloadKey());
            assertThat(old.hardware())
                    .as("record %d", i)
                    .containsExactly(task.hardware().toLogArray());
            Schedule s = old.schedule(task);
            s.replay();
            assertThat(LogFormat.toLine(LogRecord.of(task, s, MEASURED)))
                    .as("record %d", i)
                    .isEqualTo(lines.get(i));
        }
    }

    @Test
    void typedTasksFindAndApplyTheRecordsOfOldLogs() throws IOException {
        Path file = dir.resolve("old.jsonl");
        Files.write(file, goldenLines());
        ComputeDAG dag = Workloads.matmul(64, 64, 64);
        try (TuningLog log = TuningLog.open(file)) {
            for (SearchTask task : tasks(dag)) {
                LogLookup l = log.lookup(task.workloadKey(), task.targetDescription());
                assertThat(l.best()).as(task.targetDescription()).isPresent();
                assertThat(log.records(task.workloadKey(), task.targetDescription()))
                        .hasSize(1);
            }
            // the znver5 records are not the H200's, nor those of the same CPU with another core count
            SearchTask otherCores = SearchTask.of(dag, ((dev.kiln.target.CpuTarget) Target.parse(ZNVER5)).withCores(1));
            assertThat(log.records(otherCores.workloadKey(), otherCores.targetDescription()))
                    .isEmpty();
        }
        for (SearchTask task : tasks(dag)) {
            Schedule best = AutoSchedule.bestSchedule(task, file);
            assertThat(best.stepsJson().toString())
                    .isEqualTo(LogFormat.parse(goldenLines().get(tasks(dag).indexOf(task)))
                            .steps()
                            .toString());
        }
    }
}
