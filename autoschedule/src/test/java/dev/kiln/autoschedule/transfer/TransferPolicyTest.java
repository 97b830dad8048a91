package dev.kiln.autoschedule.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.log.LogFormat;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.search.Trial;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The policy wrapper: seeds lead the first batch only, never twice, never on resume; later batches are led by the
 * similar tasks' programs faster than the task's best, each considered once; the log keeps the mark.
 */
class TransferPolicyTest {

    /** Proposes its programs in order, skipping those measured or asked to skip. */
    static final class ListPolicy implements SearchPolicy {
        final List<Candidate> programs;
        final List<Integer> asked = new ArrayList<>();

        ListPolicy(List<Candidate> programs) {
            this.programs = programs;
        }

        @Override
        public String name() {
            return "list";
        }

        @Override
        public List<Candidate> nextBatch(int n, Set<String> measured) {
            asked.add(n);
            List<Candidate> out = new ArrayList<>();
            for (Candidate c : programs) if (out.size() < n && !measured.contains(c.key())) out.add(c);
            return out;
        }

        @Override
        public void update(List<Trial> trials) {}
    }

    static List<Candidate> sample(SearchTask t, int n, long seed) {
        var rules = TargetRules.of(t);
        return rules.population(t, rules.sketches(t))
                .sample(n, new SplittableRandom(seed))
                .candidates();
    }

    /** {@code n} programs sampled for {@code from} (with {@code seed}), adapted to {@code to}. */
    static List<TransferSeeds.Seed> adaptedSeeds(SearchTask from, SearchTask to, int n, long seed) {
        List<TransferSeeds.Seed> out = new ArrayList<>();
        for (Candidate c : sample(from, n, seed)) {
            out.add(new TransferSeeds.Seed(ScheduleTransfer.adaptOrThrow(c.schedule(), to, true), from.workloadKey()));
        }
        return out;
    }

    @Test
    void seedsLeadTheFirstBatchThenTheInnerPolicyFillsIt() {
        SearchTask a = Workloads.task(StructureKeyTest.convRelu(14, 8, 16, 3, 1));
        SearchTask b = Workloads.task(StructureKeyTest.convRelu(28, 4, 8, 3, 1));
        List<TransferSeeds.Seed> seeds = adaptedSeeds(a, b, 3, 5);
        List<Candidate> own = sample(b, 6, 9);
        ListPolicy inner = new ListPolicy(own);
        TransferPolicy p = new TransferPolicy(inner, () -> seeds, "b");
        Set<String> measured = new HashSet<>(Set.of(seeds.get(1).candidate().key())); // one already measured
        List<Candidate> first = p.nextBatch(4, measured);
        assertThat(first).hasSize(4);
        assertThat(first.subList(0, 2))
                .extracting(Candidate::key)
                .containsExactly(
                        seeds.get(0).candidate().key(), seeds.get(2).candidate().key());
        assertThat(p.transferredFrom(first.get(0))).isEqualTo(a.workloadKey());
        assertThat(p.transferredFrom(first.get(3))).isEmpty();
        assertThat(inner.asked).containsExactly(2);
        assertThat(p.transferred()).isEqualTo(2);
        // later batches are the inner policy's alone
        assertThat(p.nextBatch(3, Set.of())).isEqualTo(own.subList(0, 3));

        // a task that resumes with trials of its own gets nothing transferred
        TransferPolicy resumed = new TransferPolicy(new ListPolicy(own), () -> seeds, "b");
        resumed.update(List.of(new Trial(own.getFirst(), MeasureResult.ok(new double[] {1e-3}, 0, 0))));
        assertThat(resumed.nextBatch(2, Set.of())).isEqualTo(own.subList(0, 2));
        assertThat(resumed.transferred()).isZero();
    }

    @Test
    void laterBatchesAreLedByWhatTheLateSupplierOffers() {
        SearchTask a = Workloads.task(StructureKeyTest.convRelu(14, 8, 16, 3, 1));
        SearchTask b = Workloads.task(StructureKeyTest.convRelu(28, 4, 8, 3, 1));
        List<TransferSeeds.Seed> late = adaptedSeeds(a, b, 3, 11);
        List<Candidate> own = sample(b, 8, 9);
        List<Integer> asked = new ArrayList<>();
        TransferPolicy p = new TransferPolicy(
                new ListPolicy(own),
                List::of,
                k -> {
                    asked.add(k);
                    return late.subList(0, Math.min(k, late.size()));
                },
                "b");
        assertThat(p.nextBatch(3, Set.of())).isEqualTo(own.subList(0, 3)); // no first seeds
        assertThat(asked).isEmpty();
        List<Candidate> second = p.nextBatch(4, Set.of());
        assertThat(asked).containsExactly(TransferPolicy.LATE_PER_BATCH);
        assertThat(second.subList(0, 2))
                .extracting(Candidate::key)
                .containsExactly(
                        late.get(0).candidate().key(), late.get(1).candidate().key());
        assertThat(p.transferredFrom(second.get(1))).isEqualTo(a.workloadKey());
        assertThat(second.subList(2, 4)).isEqualTo(own.subList(0, 2));
        assertThat(p.nextBatch(1, Set.of())).hasSize(1);
        assertThat(asked).containsExactly(2, 1); // never more than the batch holds

        // a resumed task is offered the late programs from its first batch on
        TransferPolicy resumed = new TransferPolicy(new ListPolicy(own), List::of, k -> late.subList(0, k), "b");
        resumed.update(List.of(new Trial(own.getFirst(), MeasureResult.ok(new double[] {1e-3}, 0, 0))));
        assertThat(resumed.nextBatch(3, Set.of()).getFirst().key())
                .isEqualTo(late.getFirst().candidate().key());
    }

    @Test
    void betterOffersOnlyFasterProgramsOfSimilarTasksFastestFirstAndEachOnce() {
        SearchTask a = Workloads.task(StructureKeyTest.convRelu(14, 8, 16, 3, 1));
        SearchTask b = Workloads.task(StructureKeyTest.convRelu(28, 4, 8, 3, 1));
        TuningLog log = TuningLog.inMemory();
        Set<String> seen = new HashSet<>();
        assertThat(TransferSeeds.better(b, List.of(a), log, seen, 2, 1.1)).isEmpty(); // b has no program yet
        double bRate = 1e9; // b's best: 1 GFLOP/s
        log.append(LogRecord.of(
                b, sample(b, 1, 3).getFirst().schedule(), result(b.dag().flopCount() / bRate)));
        // a's programs at 0.5, 1.05, 3 and 2 times b's throughput: 1.05 is inside the margin
        double[] speed = {0.5, 1.05, 3, 2};
        List<Candidate> as = sample(a, speed.length, 21);
        for (int i = 0; i < speed.length; i++) {
            log.append(LogRecord.of(a, as.get(i).schedule(), result(a.dag().flopCount() / (bRate * speed[i]))));
        }
        List<TransferSeeds.Seed> got = TransferSeeds.better(b, List.of(a), log, seen, 3, 1.1);
        assertThat(got).hasSize(2);
        assertThat(got).allSatisfy(g -> assertThat(g.from()).isEqualTo(a.workloadKey()));
        assertThat(got.get(0).candidate().key())
                .isEqualTo(ScheduleTransfer.adaptOrThrow(as.get(2).schedule(), b, true)
                        .key());
        assertThat(got.get(1).candidate().key())
                .isEqualTo(ScheduleTransfer.adaptOrThrow(as.get(3).schedule(), b, true)
                        .key());
        assertThat(seen).hasSize(2);
        assertThat(TransferSeeds.better(b, List.of(a), log, seen, 3, 1.1)).isEmpty(); // each considered once
        // once b's own best beats them all, nothing is offered even with a fresh memory
        log.append(LogRecord.of(
                b, sample(b, 2, 4).get(1).schedule(), result(b.dag().flopCount() / (bRate * 4))));
        assertThat(TransferSeeds.better(b, List.of(a), log, new HashSet<>(), 3, 1.1))
                .isEmpty();
    }

    private static MeasureResult result(double seconds) {
        return MeasureResult.ok(new double[] {seconds}, 0.1, 0.2);
    }

    @Test
    void theLogLineKeepsTheTransferMark() {
        SearchTask t = Workloads.task(StructureKeyTest.convRelu(14, 8, 16, 3, 1));
        Candidate c = sample(t, 1, 2).getFirst();
        LogRecord plain = LogRecord.of(t, c.schedule(), MeasureResult.ok(new double[] {2e-3}, 0.1, 0.2));
        assertThat(LogFormat.toLine(plain)).doesNotContain("transfer_from");
        LogRecord marked = plain.withTransferFrom("kiln-abc");
        String line = LogFormat.toLine(marked);
        assertThat(line).contains("\"transfer_from\":\"kiln-abc\"");
        LogRecord back = LogFormat.parse(line);
        assertThat(back).isEqualTo(marked).isNotEqualTo(plain);
        assertThat(back.isTransferred()).isTrue();
        assertThat(back.asRemeasure().transferFrom()).isEqualTo("kiln-abc");
        assertThat(LogFormat.parse(LogFormat.toLine(plain)).isTransferred()).isFalse();
    }
}
