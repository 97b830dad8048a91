package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.mutation.Children;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.Stage;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The JVM target's search samples only register tiles the JVM backend keeps in vector locals: the vectorized tile
 * loop a whole number of vectors, at most 16 rows, at most 24 vectors (512-bit). The tile is read straight from each
 * program's loop state here (not through {@link CheckJvmTiles#refusal}), and the CPU rules' samples of the same
 * workload are shown to break it, so the test can fail.
 */
class CheckJvmTilesTest {
    static final CpuTarget JVM = new CpuTarget("jvm", "hotspot", "", 2, 512, 64);
    static final CpuTarget CPU = new CpuTarget("x86_64-unknown-linux-gnu", "znver5", "", 2, 512, 64);

    /** Rows, vectors and whether the vector loop is whole, of each reduction stage's vectorized tile; null if none. */
    record Tile(String stage, long rows, long extent, boolean whole) {}

    static Tile tile(Stage st, int lanes) {
        List<Iter> it = st.iters();
        int r = -1;
        for (int i = 0; i < it.size(); i++) if (it.get(i).kind() == IterKind.REDUCE) r = i;
        if (r < 0 || r == it.size() - 1) return null;
        Iter v = it.get(it.size() - 1);
        if (v.annotation() != IterAnnotation.VECTORIZE) return null;
        long rows = 1;
        for (int i = r + 1; i < it.size() - 1; i++) rows *= it.get(i).extent();
        return new Tile(st.name(), rows, v.extent(), v.extent() % lanes == 0);
    }

    static boolean fits(Candidate c) {
        for (Stage st : c.state().stages()) {
            if (st.isPlaceholder()) continue;
            Tile t = tile(st, 16);
            if (t == null) continue;
            if (!t.whole() || t.rows() > 16 || t.rows() * (t.extent() / 16) > 24) return false;
            if (st.output() && st.scope() != dev.kiln.ir.MemoryScope.LOCAL) return false;
        }
        return true;
    }

    @Test
    void jvmTargetGetsTheCheckAndCpuDoesNot() {
        List<String> jvm =
                TargetRules.of(JVM).initRules().stream().map(InitRule::name).toList();
        assertThat(jvm).last().isEqualTo(CheckJvmTiles.NAME);
        assertThat(TargetRules.of(CPU).initRules().stream().map(InitRule::name)).doesNotContain(CheckJvmTiles.NAME);
        assertThat(CheckJvmTiles.isJvm(dev.kiln.target.Target.jvm())).isTrue();
    }

    @Test
    void jvmSamplesAndMutationsNeverUnroll512() {
        SearchTask task = SearchTask.of(Workloads.matmul(256, 256, 256), JVM);
        List<Candidate> cs =
                TargetRules.of(JVM).sample(task, 60, new SplittableRandom(11)).candidates();
        java.util.Set<Integer> seen = new java.util.TreeSet<>();
        for (Candidate c : cs)
            for (Stage st : c.state().stages()) if (!st.isPlaceholder()) seen.add(st.autoUnrollMaxStep());
        assertThat(seen).doesNotContain(512).contains(16, 64);
        assertThat(TargetRules.of(JVM).mutations().stream()
                        .filter(m -> m.rule() instanceof dev.kiln.autoschedule.mutation.MutateAutoUnroll)
                        .map(m -> ((dev.kiln.autoschedule.mutation.MutateAutoUnroll) m.rule()).choices()))
                .containsExactly(InitUnroll.JVM_STEPS);
        // the CPU's samples do draw 512 (so the assertion above can fail)
        List<Candidate> cpu = TargetRules.of(CPU)
                .sample(SearchTask.of(Workloads.matmul(256, 256, 256), CPU), 60, new SplittableRandom(11))
                .candidates();
        assertThat(cpu.stream().flatMap(c -> c.state().stages().stream()).map(Stage::autoUnrollMaxStep))
                .contains(512);
    }

    @Test
    void jvmSamplesOfGemmKeepTheirTileInVectorLocals() {
        ComputeDAG dag = Workloads.matmul(1024, 1024, 1024);
        SearchTask cpuTask = SearchTask.of(dag, CPU);
        SearchTask jvmTask = SearchTask.of(dag, JVM);
        List<Candidate> cpu = TargetRules.of(CPU)
                .sample(cpuTask, 200, new SplittableRandom(7))
                .candidates();
        long cpuMisfits = cpu.stream().filter(c -> !fits(c)).count();
        assertThat(cpuMisfits)
                .as("CPU samples the JVM backend cannot hold (of 200)")
                .isGreaterThan(20);

        InitPopulation.Result jvm = TargetRules.of(JVM).sample(jvmTask, 100, new SplittableRandom(7));
        assertThat(jvm.candidates()).hasSize(100);
        assertThat(jvm.stats().invalid()).containsKey(CheckJvmTiles.NAME);
        long tiled = 0;
        for (Candidate c : jvm.candidates()) {
            assertThat(fits(c)).as(c.key()).isTrue();
            if (c.state().stages().stream().anyMatch(st -> !st.isPlaceholder() && tile(st, 16) != null)) tiled++;
        }
        assertThat(tiled).as("JVM samples with a vectorized register tile").isGreaterThan(50);

        // evolution's children: a CPU sample that does not fit is no child on the JVM target, one that fits is
        Candidate misfit = cpu.stream().filter(c -> !fits(c)).findFirst().orElseThrow();
        assertThat(Children.of(jvmTask, misfit.schedule().steps())).isNull();
        assertThat(Children.of(cpuTask, misfit.schedule().steps())).isNotNull();
        Candidate fit = jvm.candidates().get(0);
        assertThat(Children.of(jvmTask, fit.schedule().steps())).isNotNull();
    }

    /** The check refuses nothing that leaves a workload without programs (an rfactor's 4-wide vector is kept). */
    @Test
    void otherWorkloadsStillSample() {
        List<ComputeDAG> dags = List.of(
                Workloads.conv2dNhwcRelu(1, 14, 14, 64, 64, 3),
                Workloads.softmaxNm(64, 256),
                Workloads.layerNorm(64, 256),
                Workloads.minNm(64, 256));
        for (ComputeDAG dag : dags) {
            InitPopulation.Result r = TargetRules.of(JVM).sample(SearchTask.of(dag, JVM), 20, new SplittableRandom(5));
            assertThat(r.candidates()).as(dag.toString()).hasSize(20);
        }
    }

    @Test
    void anAxisOfNoWholeVectorsStillSamples() {
        // N = 20 is no multiple of 16 lanes: partial vectors are all there is, so they are not refused
        SearchTask task = SearchTask.of(Workloads.matmul(64, 20, 64), JVM);
        InitPopulation.Result r = TargetRules.of(JVM).sample(task, 30, new SplittableRandom(3));
        assertThat(r.candidates()).hasSize(30);
    }

    @Test
    void theSearchsTileLimitsAreTheGeneratorsOnes() {
        // the generator (jit's RegisterTiles and Promotion) reads the same constants: TileMethodsTest checks that side
        assertThat(CheckJvmTiles.MAX_ROWS).isEqualTo(dev.kiln.target.JvmRegisterTiles.MAX_ROWS);
        for (int bits : new int[] {128, 256, 512}) {
            assertThat(CheckJvmTiles.maxVectors(bits)).isEqualTo(dev.kiln.target.JvmRegisterTiles.maxVectors(bits));
        }
    }
}
