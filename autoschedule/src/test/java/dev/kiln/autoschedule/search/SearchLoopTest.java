package dev.kiln.autoschedule.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tuning loop with a fast fake measurer: budgets, logging, resume, determinism, stopping rules. */
class SearchLoopTest {
    static final CpuTarget CPU = new CpuTarget("x86_64-unknown-linux-gnu", "znver4", "+avx2,+fma", 2, 256, 64);
    static final ComputeDAG MATMUL = Workloads.matmul(24, 20, 36);
    static final SearchTask TASK = AutoSchedule.task(MATMUL, CPU);

    @TempDir
    Path dir;

    static SearchOutcome run(TuningLog log, long seed, SearchLimits limits, FakeMeasurer m, AtomicLong clock) {
        return new SearchLoop(TASK, RandomSearchPolicy.cpu(TASK, seed), m, log, limits, TuneProgress.none(), clock::get)
                .run();
    }

    static SearchOutcome run(Path file, long seed, int trials, int perRound, FakeMeasurer m) {
        try (TuningLog log = TuningLog.open(file)) {
            return run(log, seed, new SearchLimits(trials, perRound, Duration.ZERO, 0), m, new AtomicLong());
        }
    }

    static FakeMeasurer fake() {
        return new FakeMeasurer(CPU, 4, new AtomicLong(), 0);
    }

    static String key(LogRecord r) {
        return Candidate.of(r.schedule(MATMUL)).key();
    }

    @Test
    void aMeasurerThatTakesBatchesGetsTheRoundInPartsAndTheLogIsTheSame() {
        Path one = dir.resolve("one-by-one.jsonl");
        Path parts = dir.resolve("in-parts.jsonl");
        FakeMeasurer serial = fake();
        List<Integer> sizes = new ArrayList<>();
        FakeMeasurer batched = new FakeMeasurer(CPU, 4, new AtomicLong(), 0) {
            @Override
            public int batchSize() {
                return 3;
            }

            @Override
            public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
                sizes.add(schedules.size());
                return super.measure(task, schedules);
            }
        };
        SearchOutcome a = run(one, 3, 20, 8, serial);
        SearchOutcome b = run(parts, 3, 20, 8, batched);
        assertThat(b.trials()).isEqualTo(a.trials()).isEqualTo(20);
        assertThat(b.errors()).isEqualTo(a.errors());
        assertThat(batched.measured()).isEqualTo(serial.measured());
        assertThat(TuningLog.open(parts).records().stream().map(SearchLoopTest::key))
                .containsExactlyElementsOf(TuningLog.open(one).records().stream()
                        .map(SearchLoopTest::key)
                        .toList());
        // rounds of 8, 8 and 4 programs, each in parts of at most 3
        assertThat(sizes).containsExactly(3, 3, 2, 3, 3, 2, 3, 1);
    }

    @Test
    void measuresUpToTheBudgetLogsEveryTrialAndKeepsTheBest() {
        Path file = dir.resolve("tune.jsonl");
        FakeMeasurer m = fake();
        SearchOutcome o = run(file, 1, 21, 8, m);
        assertThat(o.stopReason()).isEqualTo(StopReason.TRIAL_BUDGET);
        assertThat(o.trials()).isEqualTo(21);
        assertThat(o.newTrials()).isEqualTo(21);
        assertThat(o.restoredTrials()).isZero();
        assertThat(m.measured()).hasSize(21);

        List<LogRecord> records = TuningLog.open(file).records();
        assertThat(records).hasSize(21);
        assertThat(records).allSatisfy(r -> {
            assertThat(r.workloadKey()).isEqualTo(MATMUL.workloadKey());
            assertThat(r.target()).isEqualTo(CPU.toString());
            assertThat(r.hardware()).containsExactly(2, 32, 64, 0, 0, 0, 0, 0);
        });
        assertThat(records.stream().map(SearchLoopTest::key).distinct()).hasSize(21);
        long failed = records.stream().filter(r -> !r.isValid()).count();
        assertThat(failed).isPositive().isLessThan(21);
        assertThat(o.errors()).isEqualTo((int) failed);
        assertThat(o.errorsByKind()).containsOnlyKeys("COMPILE");
        assertThat(o.firstErrors().get("COMPILE")).startsWith("fake compile error");

        // The best is the fastest valid record, found at the trial where it appears in the log.
        double fastest = records.stream()
                .filter(LogRecord::isValid)
                .mapToDouble(LogRecord::seconds)
                .min()
                .orElseThrow();
        BestProgram best = o.best().orElseThrow();
        assertThat(best.seconds()).isEqualTo(fastest);
        assertThat(records.get(best.trial() - 1).seconds()).isEqualTo(fastest);
        assertThat(best.schedule().stepsJson())
                .isEqualTo(records.get(best.trial() - 1).schedule(MATMUL).stepsJson());
        assertThat(FakeMeasurer.secondsOf(best.schedule())).isEqualTo(fastest);
    }

    @Test
    void aResumedRunSkipsLoggedProgramsAndContinuesTheCount() {
        // A tuner killed after 7 trials is a run with a budget of 7.
        Path file = dir.resolve("resume.jsonl");
        FakeMeasurer first = fake();
        SearchOutcome a = run(file, 5, 7, 4, first);
        assertThat(a.trials()).isEqualTo(7);
        Set<String> firstKeys = new HashSet<>();
        for (LogRecord r : TuningLog.open(file).records()) firstKeys.add(key(r));

        FakeMeasurer second = fake();
        SearchOutcome b = run(file, 5, 20, 4, second);
        assertThat(b.restoredTrials()).isEqualTo(7);
        assertThat(b.newTrials()).isEqualTo(13);
        assertThat(b.trials()).isEqualTo(20);
        assertThat(second.measured()).hasSize(13);
        List<LogRecord> all = TuningLog.open(file).records();
        assertThat(all).hasSize(20);
        for (LogRecord r : all.subList(7, 20)) assertThat(firstKeys).doesNotContain(key(r));
        assertThat(all.stream().map(SearchLoopTest::key).distinct()).hasSize(20);

        // The best of the resumed run is the best of the whole log, whichever run found it.
        double fastest = all.stream()
                .filter(LogRecord::isValid)
                .mapToDouble(LogRecord::seconds)
                .min()
                .orElseThrow();
        assertThat(b.best().orElseThrow().seconds()).isEqualTo(fastest);
        assertThat(b.errors())
                .isEqualTo((int) all.stream().filter(r -> !r.isValid()).count());

        // Resuming a finished task measures nothing.
        FakeMeasurer third = fake();
        SearchOutcome c = run(file, 5, 20, 4, third);
        assertThat(c.newTrials()).isZero();
        assertThat(c.stopReason()).isEqualTo(StopReason.TRIAL_BUDGET);
        assertThat(third.measured()).isEmpty();
        assertThat(c.best()).isEqualTo(b.best());
    }

    @Test
    void aTunerThatDiesMidRoundKeepsEveryMeasurementItHadMade() {
        Path file = dir.resolve("died.jsonl");
        FakeMeasurer dies = new FakeMeasurer(CPU) {
            int calls;

            @Override
            public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
                if (++calls == 6) throw new IllegalStateException("the tuner is killed");
                return super.measure(task, schedules);
            }
        };
        assertThatThrownBy(() -> run(file, 8, 20, 8, dies)).hasMessageContaining("killed");
        // Five programs of the first round of eight were measured: all five are in the log.
        List<LogRecord> kept = TuningLog.open(file).records();
        assertThat(kept).hasSize(5);
        assertThat(kept.stream().map(r -> r.steps().toString()).toList()).isEqualTo(dies.measured());

        FakeMeasurer after = fake();
        SearchOutcome o = run(file, 8, 20, 8, after);
        assertThat(o.restoredTrials()).isEqualTo(5);
        assertThat(after.measured()).hasSize(15);
        assertThat(TuningLog.open(file).records()).hasSize(20);
    }

    @Test
    void theSameSeedAndLogGiveTheSameSearch() throws Exception {
        Path a = dir.resolve("a.jsonl"), b = dir.resolve("b.jsonl"), c = dir.resolve("c.jsonl");
        run(a, 11, 18, 5, fake());
        run(b, 11, 18, 5, fake());
        run(c, 12, 18, 5, fake());
        assertThat(comparable(a)).isEqualTo(comparable(b));
        assertThat(comparable(a)).isNotEqualTo(comparable(c));
        // The raw lines differ only in what the clock says.
        assertThat(Files.readAllLines(a)).isNotEqualTo(Files.readAllLines(b));

        // Resuming the same log with the same seed twice gives the same continuation.
        Path a2 = dir.resolve("a2.jsonl");
        Files.copy(a, a2);
        run(a, 11, 30, 5, fake());
        run(a2, 11, 30, 5, fake());
        assertThat(comparable(a)).hasSize(30).isEqualTo(comparable(a2));
    }

    /** The log's lines without the fields that depend on the clock. */
    static List<String> comparable(Path file) throws Exception {
        ObjectMapper json = new ObjectMapper();
        return Files.readAllLines(file).stream()
                .map(line -> {
                    try {
                        ObjectNode o = (ObjectNode) json.readTree(line);
                        o.remove(List.of("timestamp", "wall_s", "compile_s"));
                        return o.toString();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                })
                .toList();
    }

    @Test
    void earlyStoppingStopsAfterThatManyTrialsWithoutABetterProgram() {
        try (TuningLog log = TuningLog.inMemory()) {
            SearchOutcome o = run(log, 3, new SearchLimits(500, 1, Duration.ZERO, 6), fake(), new AtomicLong());
            assertThat(o.stopReason()).isEqualTo(StopReason.EARLY_STOPPING);
            BestProgram best = o.best().orElseThrow();
            assertThat(o.trials() - best.trial()).isEqualTo(6);
            assertThat(o.trials()).isLessThan(500);
            List<LogRecord> records = log.records();
            assertThat(records).hasSize(o.trials());
            for (LogRecord r : records.subList(best.trial(), records.size())) {
                assertThat(r.seconds()).isGreaterThanOrEqualTo(best.seconds());
            }
            // Every earlier record was slower than the best at some point: the best improved at its own trial.
            for (LogRecord r : records.subList(0, best.trial() - 1))
                assertThat(r.seconds()).isGreaterThan(best.seconds());
        }
    }

    @Test
    void theTimeBudgetIsCheckedBeforeEachProgram() {
        AtomicLong clock = new AtomicLong();
        FakeMeasurer m = new FakeMeasurer(CPU, 0, clock, Duration.ofSeconds(1).toNanos());
        try (TuningLog log = TuningLog.inMemory()) {
            SearchOutcome o = run(log, 2, new SearchLimits(100, 4, Duration.ofSeconds(10), 0), m, clock);
            // Programs start at 0, 1, ..., 9 s; the eleventh, in the middle of the third round, would start at 10 s.
            assertThat(o.stopReason()).isEqualTo(StopReason.TIME_BUDGET);
            assertThat(o.trials()).isEqualTo(10);
            assertThat(o.elapsed()).isEqualTo(Duration.ofSeconds(10));
            assertThat(log.records()).hasSize(10);
        }
    }

    @Test
    void aSmallSpaceRunsOutBeforeTheBudget() {
        Tensor a = Te.placeholder("A", dev.kiln.ir.DType.FLOAT32, 4);
        ComputeDAG dag = ComputeDAG.of(Te.compute("B", Te.shape(4), i -> a.at(i).mul(Te.f32(2))));
        SearchTask task = AutoSchedule.task(dag, CPU);
        try (TuningLog log = TuningLog.inMemory()) {
            SearchOutcome o = new SearchLoop(
                            task,
                            new RandomSearchPolicy(task, TargetRules.cpu().sketches(task), 1, 200),
                            new FakeMeasurer(CPU),
                            log,
                            new SearchLimits(1000, 16, Duration.ZERO, 0),
                            TuneProgress.none())
                    .run();
            assertThat(o.stopReason()).isEqualTo(StopReason.SEARCH_SPACE_EXHAUSTED);
            assertThat(o.trials()).isBetween(1, 999).isEqualTo(log.records().size());
            assertThat(log.records().stream()
                            .map(r -> Candidate.of(r.schedule(dag)).key())
                            .distinct())
                    .hasSize(o.trials());
        }
    }

    @Test
    void loggedRecordsThatNoLongerReplayCountButAreNotApplied() {
        TuningLog log = TuningLog.inMemory();
        ObjectMapper json = new ObjectMapper();
        com.fasterxml.jackson.databind.node.ArrayNode steps = json.createArrayNode();
        steps.add(json.createArrayNode()
                .add("SP")
                .add(9)
                .add(0)
                .add(24)
                .add(json.createArrayNode().add(2))
                .add(1));
        log.append(LogRecord.builder()
                .workloadKey(MATMUL.workloadKey())
                .target(CPU.toString())
                .hardware(TASK.hardware().toLogArray())
                .steps(steps)
                .costs(List.of(1e-9))
                .timestamp(java.time.Instant.EPOCH)
                .build());
        SearchOutcome o = run(log, 1, new SearchLimits(5, 5, Duration.ZERO, 0), fake(), new AtomicLong());
        assertThat(o.unreplayable()).isEqualTo(1);
        assertThat(o.restoredTrials()).isEqualTo(1);
        assertThat(o.trials()).isEqualTo(5);
        assertThat(o.best().orElseThrow().seconds()).isGreaterThan(1e-9);
    }

    @Test
    void aPolicyOrMeasurerThatBreaksItsContractIsCaught() {
        SearchPolicy repeating = new SearchPolicy() {
            final Candidate c =
                    RandomSearchPolicy.cpu(TASK, 1).nextBatch(1, Set.of()).getFirst();

            @Override
            public String name() {
                return "repeating";
            }

            @Override
            public List<Candidate> nextBatch(int n, Set<String> measured) {
                return List.of(c);
            }

            @Override
            public void update(List<Trial> trials) {}
        };
        SearchLimits limits = new SearchLimits(4, 2, Duration.ZERO, 0);
        assertThatThrownBy(
                        () -> new SearchLoop(TASK, repeating, fake(), TuningLog.inMemory(), limits, TuneProgress.none())
                                .run())
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("repeating")
                .hasMessageContaining("already measured");

        FakeMeasurer dropsOne = new FakeMeasurer(CPU) {
            @Override
            public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
                return super.measure(task, schedules).subList(0, schedules.size() - 1);
            }
        };
        assertThatThrownBy(() -> new SearchLoop(
                                TASK,
                                RandomSearchPolicy.cpu(TASK, 1),
                                dropsOne,
                                TuningLog.inMemory(),
                                limits,
                                TuneProgress.none())
                        .run())
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("0 results for 1 program");
    }

    @Test
    void progressIsShownPerProgramAndPerRound() {
        TuningLog log = TuningLog.inMemory();
        run(log, 4, new SearchLimits(3, 3, Duration.ZERO, 0), new FakeMeasurer(CPU), new AtomicLong());
        List<String> events = new java.util.ArrayList<>();
        dev.kiln.autoschedule.progress.TuneProgress recording = new dev.kiln.autoschedule.progress.TuneProgress() {
            @Override
            public void start(String taskName, dev.kiln.autoschedule.progress.ProgressState s) {
                events.add("start " + taskName + " " + s.done() + "/" + s.total());
            }

            @Override
            public void update(dev.kiln.autoschedule.progress.ProgressState s) {
                events.add("trial " + s.done() + " " + s.errors() + (s.bestGflops() > 0 ? " best" : ""));
            }

            @Override
            public void roundDone(dev.kiln.autoschedule.progress.ProgressState s) {
                events.add("round " + s.done());
            }

            @Override
            public void close() {
                events.add("close");
            }
        };
        new SearchLoop(
                        TASK,
                        RandomSearchPolicy.cpu(TASK, 2),
                        fake(),
                        log,
                        new SearchLimits(8, 2, Duration.ZERO, 0),
                        recording)
                .run();
        assertThat(events.getFirst()).isEqualTo("start matmul 3/8");
        assertThat(events.stream().filter(e -> e.startsWith("trial")).count()).isEqualTo(5);
        assertThat(events.stream().filter(e -> e.startsWith("round")).toList())
                .containsExactly("round 5", "round 7", "round 8");
        assertThat(events.getLast()).isEqualTo("close");
        assertThat(events.stream().filter(e -> e.startsWith("trial"))).allMatch(e -> e.endsWith(" best"));
        long errors = log.records().stream().filter(r -> !r.isValid()).count();
        assertThat(errors).isPositive();
        assertThat(events.get(events.size() - 3)).isEqualTo("trial 8 " + errors + " best");
    }

    @Test
    void thePolicyHearsOfRestoredAndNewTrials() {
        TuningLog log = TuningLog.inMemory();
        run(log, 4, new SearchLimits(6, 3, Duration.ZERO, 0), fake(), new AtomicLong());
        List<Integer> updates = new java.util.ArrayList<>();
        RandomSearchPolicy inner = RandomSearchPolicy.cpu(TASK, 9);
        SearchPolicy spy = new SearchPolicy() {
            @Override
            public String name() {
                return "spy";
            }

            @Override
            public List<Candidate> nextBatch(int n, Set<String> measured) {
                assertThat(measured)
                        .hasSize(6
                                + updates.stream()
                                        .skip(1)
                                        .mapToInt(Integer::intValue)
                                        .sum());
                return inner.nextBatch(n, measured);
            }

            @Override
            public void update(List<Trial> trials) {
                updates.add(trials.size());
            }
        };
        new SearchLoop(TASK, spy, fake(), log, new SearchLimits(13, 4, Duration.ZERO, 0), TuneProgress.none()).run();
        assertThat(updates).containsExactly(6, 4, 3);
    }

    @Test
    void roundsOneAtATimeLogAndResumeLikeARun() throws Exception {
        // A run of 12 trials, 4 per round, and three rounds of 4 on a fresh log write the same log.
        Path a = dir.resolve("run.jsonl"), b = dir.resolve("rounds.jsonl");
        run(a, 3, 12, 4, fake());
        try (TuningLog log = TuningLog.open(b)) {
            SearchLoop loop = new SearchLoop(
                    TASK,
                    RandomSearchPolicy.cpu(TASK, 3),
                    fake(),
                    log,
                    new SearchLimits(12, 4, Duration.ZERO, 0),
                    TuneProgress.none());
            assertThat(loop.restore()).isZero();
            for (int r = 1; r <= 3; r++) {
                SearchRound round = loop.round(4);
                assertThat(round.measured()).isEqualTo(4);
                assertThat(round.exhausted()).isFalse();
                assertThat(loop.trials()).isEqualTo(4 * r);
                assertThat(log.records()).hasSize(4 * r);
                double fastest = log.records().stream()
                        .filter(LogRecord::isValid)
                        .mapToDouble(LogRecord::seconds)
                        .min()
                        .orElseThrow();
                assertThat(loop.best().orElseThrow().seconds()).isEqualTo(fastest);
                assertThat(loop.errors()).isEqualTo((int)
                        log.records().stream().filter(x -> !x.isValid()).count());
            }
            assertThatThrownBy(loop::run).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> loop.round(0)).isInstanceOf(KilnException.class);
        }
        assertThat(comparable(b)).isEqualTo(comparable(a));

        // Round by round from the log: the 12 trials are restored, the next round measures 5 new programs.
        FakeMeasurer m = fake();
        try (TuningLog log = TuningLog.open(b)) {
            SearchLoop loop = SearchLoop.forRounds(TASK, RandomSearchPolicy.cpu(TASK, 3), m, log);
            assertThat(loop.restore()).isEqualTo(12);
            double restoredBest = loop.best().orElseThrow().seconds();
            loop.round(5);
            assertThat(m.measured()).hasSize(5);
            assertThat(loop.trials()).isEqualTo(17);
            assertThat(log.records().stream().map(SearchLoopTest::key).distinct())
                    .hasSize(17);
            double[] curve = loop.bestSecondsByTrial();
            assertThat(curve).hasSize(17);
            for (int i = 1; i < curve.length; i++) assertThat(curve[i]).isLessThanOrEqualTo(curve[i - 1]);
            assertThat(curve[11]).isEqualTo(restoredBest);
            assertThat(curve[16]).isEqualTo(loop.best().orElseThrow().seconds());
            SearchOutcome o = loop.outcome(StopReason.TRIAL_BUDGET);
            assertThat(o.restoredTrials()).isEqualTo(12);
            assertThat(o.newTrials()).isEqualTo(5);
        }
    }
}
