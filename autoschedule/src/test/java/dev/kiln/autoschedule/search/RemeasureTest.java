package dev.kiln.autoschedule.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogFormat;
import dev.kiln.autoschedule.log.LogLookup;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The re-measure of a search's fastest programs: the choice by re-measured cost, the log records, resume. */
class RemeasureTest {
    @TempDir
    Path dir;

    /** A fake whose first measurement of every other program (by hash) is lucky: a fifth of its true time. */
    static final class LuckyMeasurer extends FakeMeasurer {
        final Map<String, Integer> seen = new HashMap<>();

        LuckyMeasurer() {
            super(SearchLoopTest.CPU, 4, new AtomicLong(), 0);
            withOptions(MeasureOptions.defaults().withRemeasure(3, 2));
        }

        static boolean lucky(Schedule s) {
            return hash(s) % 2 == 0;
        }

        @Override
        public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
            List<MeasureResult> out = new ArrayList<>(super.measure(task, schedules));
            for (int i = 0; i < out.size(); i++) {
                Schedule s = schedules.get(i);
                int n = seen.merge(s.stepsJson().toString(), 1, Integer::sum);
                if (n == 1 && lucky(s) && out.get(i).ok()) {
                    double t = secondsOf(s) / 5;
                    out.set(i, MeasureResult.ok(new double[] {t, t, t}, 0.01, 0.01));
                }
            }
            return out;
        }
    }

    private static List<Candidate> candidates(int n) {
        return RandomSearchPolicy.cpu(SearchLoopTest.TASK, 5).nextBatch(n, Set.of());
    }

    @Test
    void theTopProgramsAreChosenByTheirReMeasuredCost() {
        List<Candidate> c = candidates(6);
        double[] measured = {1.0, 2.0, 2.5, 2.8, 3.5, 4.0};
        double[] truth = {3.0, 2.0, 2.5, 2.8, 3.5, 4.0}; // c0 was lucky once
        ProgramBook book = new ProgramBook();
        for (int i = 0; i < 6; i++) book.add(c.get(i), true, measured[i], i + 1);
        assertThat(book.best().orElseThrow().schedule()).isEqualTo(c.get(0).schedule());
        Map<Candidate, Integer> calls = new HashMap<>();
        int made = Remeasure.run(book, 3, 2, x -> {
            calls.merge(x, 1, Integer::sum);
            double t = truth[c.indexOf(x)];
            return MeasureResult.ok(new double[] {t}, 0, 0);
        });
        BestProgram best = book.best().orElseThrow();
        assertThat(best.schedule()).isEqualTo(c.get(1).schedule());
        assertThat(best.seconds()).isEqualTo(2.0);
        assertThat(best.trial()).isEqualTo(2);
        // c0 fell out of the top 3 after its re-measures, so c3 came in and was re-measured too
        assertThat(calls)
                .containsEntry(c.get(0), 2)
                .containsEntry(c.get(1), 2)
                .containsEntry(c.get(2), 2)
                .containsEntry(c.get(3), 2)
                .doesNotContainKeys(c.get(4), c.get(5));
        assertThat(made).isEqualTo(8);
        assertThat(Remeasure.run(book, 3, 2, x -> {
                    throw new AssertionError("nothing left to re-measure");
                }))
                .isZero();
        assertThat(Remeasure.run(book, 0, 2, x -> {
                    throw new AssertionError("off");
                }))
                .isZero();
    }

    @Test
    void aProgramWhoseReMeasurementFailsIsNeverTheBest() {
        List<Candidate> c = candidates(3);
        ProgramBook book = new ProgramBook();
        for (int i = 0; i < 3; i++) book.add(c.get(i), true, 1.0 + i, i + 1);
        Remeasure.run(
                book,
                2,
                1,
                x -> x == c.get(0)
                        ? MeasureResult.failed(MeasureError.WRONG_RESULT, "a race", 0, 0)
                        : MeasureResult.ok(new double[] {2.0}, 0, 0));
        assertThat(book.best().orElseThrow().schedule()).isEqualTo(c.get(1).schedule());
    }

    @Test
    void aSearchReMeasuresItsBestLogsItAndResumesWithoutMeasuringAgain() {
        Path file = dir.resolve("lucky.jsonl");
        LuckyMeasurer m = new LuckyMeasurer();
        SearchOutcome o = SearchLoopTest.run(file, 3, 24, 8, m);
        assertThat(o.trials()).isEqualTo(24);
        List<LogRecord> records = TuningLog.open(file).records();
        List<LogRecord> trials = records.stream().filter(r -> !r.isRemeasure()).toList();
        List<LogRecord> again = records.stream().filter(LogRecord::isRemeasure).toList();
        assertThat(trials).hasSize(24);
        assertThat(again).hasSizeGreaterThanOrEqualTo(6);
        assertThat(m.measured()).hasSize(24 + again.size());
        Set<String> trialKeys =
                new java.util.HashSet<>(trials.stream().map(SearchLoopTest::key).toList());
        assertThat(again).allSatisfy(r -> assertThat(trialKeys).contains(SearchLoopTest.key(r)));
        assertThat(LogFormat.toLine(again.getFirst())).endsWith(",\"kind\":\"remeasure\"}");
        assertThat(LogFormat.toLine(trials.getFirst())).doesNotContain("kind");

        // The best is reported at its true time (two of its three measurements), never a lucky fifth.
        BestProgram best = o.best().orElseThrow();
        assertThat(best.seconds()).isEqualTo(FakeMeasurer.secondsOf(best.schedule()));
        double luckiest = trials.stream()
                .filter(LogRecord::isValid)
                .mapToDouble(LogRecord::seconds)
                .min()
                .orElseThrow();
        assertThat(luckiest).as("some program was lucky below the true best").isLessThan(best.seconds());

        // The log's lookup agrees with the search, and a resumed run measures nothing.
        LogLookup l = TuningLog.open(file).lookup(SearchLoopTest.MATMUL.workloadKey(), SearchLoopTest.CPU.toString());
        assertThat(l.best().orElseThrow().schedule(SearchLoopTest.MATMUL)).isEqualTo(best.schedule());
        assertThat(l.bestSeconds()).isEqualTo(best.seconds());
        LuckyMeasurer second = new LuckyMeasurer();
        SearchOutcome resumed = SearchLoopTest.run(file, 3, 24, 8, second);
        assertThat(second.measured()).isEmpty();
        assertThat(resumed.trials()).isEqualTo(24);
        assertThat(resumed.best().orElseThrow().schedule()).isEqualTo(best.schedule());
        assertThat(resumed.best().orElseThrow().seconds()).isEqualTo(best.seconds());
    }

    @Test
    void oldLinesReadAsTrialsAndAnUnknownKindIsRefused() {
        Schedule s = candidates(1).getFirst().schedule();
        LogRecord trial = LogRecord.builder()
                .workloadKey(SearchLoopTest.MATMUL.workloadKey())
                .target(SearchLoopTest.CPU.toString())
                .hardware(new int[] {2, 32, 64, 0, 0, 0, 0, 0})
                .steps(s.stepsJson())
                .costs(List.of(1e-4, 2e-4, 3e-4))
                .compileSeconds(0.1)
                .wallSeconds(0.2)
                .timestamp(java.time.Instant.parse("2026-11-01T10:00:00Z"))
                .build();
        // a line as Kiln wrote it before re-measures existed
        String old =
                "{\"v\":\"kiln-log-1\",\"workload_key\":\"" + trial.workloadKey() + "\",\"target\":\"" + trial.target()
                        + "\",\"hardware\":[2,32,64,0,0,0,0,0],\"steps\":" + s.stepsJson()
                        + ",\"costs\":[1.0E-4,2.0E-4,3.0E-4],"
                        + "\"error\":\"NONE\",\"error_msg\":\"\",\"compile_s\":0.1,"
                        + "\"wall_s\":0.2,\"timestamp\":\"2026-11-01T10:00:00Z\"}";
        assertThat(LogFormat.parse(old)).isEqualTo(trial);
        assertThat(LogFormat.parse(old).kind()).isEqualTo(LogRecord.TRIAL);
        assertThat(LogFormat.toLine(trial)).isEqualTo(old);
        LogRecord again = trial.asRemeasure();
        assertThat(LogFormat.parse(LogFormat.toLine(again))).isEqualTo(again);
        assertThat(LogFormat.parse(LogFormat.toLine(again)).isRemeasure()).isTrue();
        assertThatThrownBy(() ->
                        LogFormat.parse(old.replace("}", ",\"kind\":\"guess\"}").replace("},", "},")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("guess");
    }
}
