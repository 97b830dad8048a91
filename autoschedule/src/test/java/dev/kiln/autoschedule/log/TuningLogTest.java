package dev.kiln.autoschedule.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tuning log: JSON round trip, append-and-flush, damaged lines, best and other-target lookups. */
class TuningLogTest {
    static final String CPU_A =
            "cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -mattr=+avx2,+fma -cores=2 -vector-bits=256 "
                    + "-cache-line=64";
    static final String CPU_B =
            "cpu -mtriple=x86_64-unknown-linux-gnu -mcpu=skylake -mattr=+avx2 -cores=8 -vector-bits=256 -cache-line=64";
    static final int[] HW = {2, 32, 64, 0, 0, 0, 0, 0};

    static ComputeDAG dag;
    static List<Candidate> candidates;

    @TempDir
    Path dir;

    @BeforeAll
    static void sample() {
        dag = Workloads.matmul(12, 20, 36);
        SearchTask task = Workloads.task(dag);
        candidates = TargetRules.cpu()
                .population(task, TargetRules.cpu().sketches(task))
                .sample(6, new SplittableRandom(3))
                .candidates();
        assertThat(candidates).hasSize(6);
    }

    static LogRecord record(int candidate, String target, String error, double... costs) {
        return LogRecord.builder()
                .workloadKey(dag.workloadKey())
                .target(target)
                .hardware(HW)
                .steps(candidates.get(candidate).schedule().stepsJson())
                .costs(java.util.Arrays.stream(costs).boxed().toList())
                .error(error, error.equals(LogRecord.NO_ERROR) ? "" : "it broke: \"quoted\"\nand a second line")
                .compileSeconds(0.125)
                .wallSeconds(0.5)
                .timestamp(Instant.parse("2026-01-02T03:04:05.678Z").plusSeconds(candidate))
                .build();
    }

    @Test
    void aRecordSurvivesTheJsonRoundTripAndItsScheduleReplays() {
        List<LogRecord> records = List.of(record(0, CPU_A, "NONE", 1e-4, 3e-4, 2e-4), record(1, CPU_B, "COMPILE"));
        for (int i = 0; i < records.size(); i++) {
            String line = LogFormat.toLine(records.get(i));
            assertThat(line).doesNotContain("\n").startsWith("{\"v\":\"kiln-log-1\",\"workload_key\":");
            LogRecord back = LogFormat.parse(line);
            assertThat(back).isEqualTo(records.get(i));
            assertThat(back.schedule(dag)).isEqualTo(candidates.get(i).schedule());
        }
        LogRecord valid = record(2, CPU_A, "NONE", 4e-4, 1e-4, 2e-4, 3e-4);
        assertThat(valid.seconds())
                .isEqualTo(
                        dev.kiln.autoschedule.measure.CostStatistic.DEFAULT.of(new double[] {4e-4, 1e-4, 2e-4, 3e-4}));
        assertThat(valid.gflops(2_000_000))
                .isCloseTo(2e6 / valid.seconds() / 1e9, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(record(2, CPU_A, "RUNTIME").seconds()).isInfinite();
        assertThat(record(2, CPU_A, "RUNTIME").gflops(1000)).isZero();
    }

    @Test
    void badLinesAreRefusedWithTheReason() {
        String good = LogFormat.toLine(record(0, CPU_A, "NONE", 1e-3));
        assertThatThrownBy(() -> LogFormat.parse(good.replace("kiln-log-1", "kiln-log-0")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("kiln-log-0");
        assertThatThrownBy(() -> LogFormat.parse(good.replace("\"costs\"", "\"cost\"")))
                .hasMessageContaining("'costs'");
        assertThatThrownBy(() -> LogFormat.parse("[1,2]")).hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> record(0, CPU_A, "NONE"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("at least one cost");
        assertThatThrownBy(() -> record(0, CPU_A, "NONE", Double.NaN)).hasMessageContaining("NaN");
        assertThatThrownBy(() -> record(0, CPU_A, "NONE", 1).schedule(Workloads.matmul(12, 20, 37)))
                .hasMessageContaining("cannot be applied");
    }

    @Test
    void eachAppendIsOnDiskBeforeItReturns() throws Exception {
        Path file = dir.resolve("sub/dir/tune.jsonl");
        try (TuningLog log = TuningLog.open(file)) {
            assertThat(log.records()).isEmpty();
            for (int i = 0; i < 3; i++) {
                log.append(record(i, CPU_A, "NONE", 1e-3 * (i + 1)));
                // Read by another reader while the log is still open: the line is there, whole.
                List<String> lines = Files.readAllLines(file);
                assertThat(lines).hasSize(i + 1);
                assertThat(LogFormat.parse(lines.get(i))).isEqualTo(record(i, CPU_A, "NONE", 1e-3 * (i + 1)));
            }
        }
        try (TuningLog again = TuningLog.open(file)) {
            assertThat(again.records()).hasSize(3);
            again.append(record(3, CPU_A, "TIMEOUT"));
        }
        assertThat(TuningLog.open(file).records())
                .extracting(LogRecord::errorKind)
                .containsExactly("NONE", "NONE", "NONE", "TIMEOUT");
    }

    @Test
    void aTruncatedLastLineIsSkippedAndTheNextAppendStartsOnANewLine() throws Exception {
        Path file = dir.resolve("crashed.jsonl");
        String a = LogFormat.toLine(record(0, CPU_A, "NONE", 2e-3));
        String b = LogFormat.toLine(record(1, CPU_A, "NONE", 1e-3));
        String c = LogFormat.toLine(record(2, CPU_A, "NONE", 5e-4));
        // A tuner killed while writing its third line.
        Files.writeString(file, a + "\n" + b + "\n" + c.substring(0, c.length() / 2), StandardCharsets.UTF_8);
        try (TuningLog log = TuningLog.open(file)) {
            assertThat(log.records()).hasSize(2);
            assertThat(log.skippedLines()).singleElement().satisfies(s -> {
                assertThat(s.line()).isEqualTo(3);
                assertThat(s.reason()).contains("truncated last line");
            });
            assertThat(log.best(dag.workloadKey(), CPU_A)).contains(record(1, CPU_A, "NONE", 1e-3));
            log.append(record(3, CPU_A, "NONE", 4e-3));
        }
        try (TuningLog log = TuningLog.open(file)) {
            assertThat(log.records())
                    .containsExactly(
                            record(0, CPU_A, "NONE", 2e-3),
                            record(1, CPU_A, "NONE", 1e-3),
                            record(3, CPU_A, "NONE", 4e-3));
            assertThat(log.skippedLines()).singleElement().satisfies(s -> {
                assertThat(s.line()).isEqualTo(3);
                assertThat(s.reason()).doesNotContain("truncated").contains("not JSON");
            });
        }
    }

    @Test
    void commentsBlankLinesAndOtherVersionsAreSkipped() throws Exception {
        Path file = dir.resolve("mixed.jsonl");
        String a = LogFormat.toLine(record(0, CPU_A, "NONE", 2e-3));
        Files.writeString(file, "# a comment\n\n" + a.replace("kiln-log-1", "kiln-log-99") + "\n" + a + "\n");
        TuningLog log = TuningLog.open(file);
        assertThat(log.records()).containsExactly(record(0, CPU_A, "NONE", 2e-3));
        assertThat(log.skippedLines()).singleElement().satisfies(s -> {
            assertThat(s.line()).isEqualTo(3);
            assertThat(s.reason()).contains("kiln-log-99");
        });
    }

    @Test
    void bestIsTheFastestValidRecordOfThatWorkloadAndTarget() {
        TuningLog log = TuningLog.inMemory();
        log.append(record(0, CPU_A, "NONE", 3e-3, 3e-3, 9e-3));
        log.append(record(1, CPU_A, "WRONG_RESULT", 1e-6));
        log.append(record(2, CPU_B, "NONE", 1e-6));
        log.append(record(3, CPU_A, "NONE", 2e-3, 8e-3, 1e-3));
        log.append(record(4, CPU_A, "COMPILE"));
        LogRecord other = LogRecord.builder()
                .workloadKey("kiln-other-workload")
                .target(CPU_A)
                .hardware(HW)
                .steps(candidates.get(5).schedule().stepsJson())
                .costs(List.of(1e-9))
                .timestamp(Instant.EPOCH)
                .build();
        log.append(other);

        // The lowest median wins (record 3, median 2 ms); a faster failed one or another target's never does.
        LogLookup l = log.lookup(dag.workloadKey(), CPU_A);
        assertThat(l.best()).contains(record(3, CPU_A, "NONE", 2e-3, 8e-3, 1e-3));
        assertThat(l.matching()).isEqualTo(4);
        assertThat(l.valid()).isEqualTo(2);
        assertThat(l.errors()).containsEntry("WRONG_RESULT", 1).containsEntry("COMPILE", 1);
        assertThat(l.otherTargets()).containsOnlyKeys(CPU_B);
        assertThat(l.explanation())
                .contains("2 valid record(s)")
                .contains("not applied")
                .contains(CPU_B);
        assertThat(log.records(dag.workloadKey(), CPU_A)).hasSize(4);
        // The same target written with different spacing is the same target.
        assertThat(log.best(dag.workloadKey(), "  " + CPU_A.replace(" -cores", "   -cores")))
                .isEqualTo(l.best());
    }

    @Test
    void aLogWithOnlyOtherTargetsSaysWhichAndWhyNothingIsApplied() {
        TuningLog log = TuningLog.inMemory();
        log.append(record(0, CPU_B, "NONE", 1e-3));
        log.append(record(1, CPU_B, "NONE", 2e-3));
        LogLookup l = log.lookup(dag.workloadKey(), CPU_A);
        assertThat(l.best()).isEmpty();
        assertThat(l.explanation())
                .contains("no record of workload " + dag.workloadKey() + " on target '" + CPU_A + "'")
                .contains("2 for '" + CPU_B + "'")
                .contains("not applied");
        LogLookup none = log.lookup("kiln-nothing", CPU_A);
        assertThat(none.explanation()).contains("no record").doesNotContain("other targets");

        TuningLog failed = TuningLog.inMemory();
        failed.append(record(0, CPU_A, "CRASH"));
        assertThat(failed.lookup(dag.workloadKey(), CPU_A).explanation())
                .contains("none is valid")
                .contains("CRASH=1");
    }
}
