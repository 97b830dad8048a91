package dev.kiln.lower;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.For;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.Stmts;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pipeline's phases per target, the runner's verification naming a broken pass, and its dump. */
class PipelineTest {
    private static final CpuTarget CPU = new CpuTarget("x86_64-unknown-linux-gnu", "znver3", "+avx2,+fma", 2, 256, 64);

    private static List<String> phases(Pipeline p) {
        return p.phases().stream().map(Lowering.Phase::name).toList();
    }

    @Test
    void phasesPerTarget() {
        assertThat(phases(Lowering.pipeline())).containsExactly("canonicalize", "loops", "flatten", "cleanup");
        assertThat(phases(Lowering.pipeline(CPU))).containsExactly("canonicalize", "loops", "flatten", "cleanup");
        assertThat(phases(Lowering.pipeline(Target.cuda())))
                .containsExactly("canonicalize", "gpu", "loops", "flatten", "cleanup", "gpu-check");
        assertThat(Lowering.pipeline(Target.cuda()).phases().get(1).passes().stream()
                        .map(Lowering.Pass::name))
                .containsExactly("verify-thread-bindings", "plan-memory-scopes", "inject-barriers");
        assertThat(Lowering.pipeline(Target.cuda()).gpu()).isEqualTo(GpuLimits.h200());
    }

    @Test
    void theTestsVerifyByDefault() {
        assertThat(Lowering.Options.defaults().verify())
                .as("-Dkiln.lowering.verify=true in the surefire configuration")
                .isTrue();
    }

    /**
     * A broken pass: every loop's body reads a fresh variable no loop binds (loop variables renamed in the body only).
     */
    private static final Lowering.Pass RENAME_LOOP_VARIABLES = new Lowering.Pass(
            "rename-loop-variables",
            f -> f.withBody(
                    new StmtRewriter() {
                        @Override
                        public Stmt visit(Stmt s) {
                            Stmt x = rewriteChildren(s);
                            return x instanceof For l
                                    ? l.withBody(Stmts.substitute(
                                            l.body(), l.var(), new Var(l.var().name() + "'")))
                                    : x;
                        }
                    }.visit(f.body())));

    private static Pipeline broken() {
        Lowering.Phase loops = Lowering.pipeline().phases().get(1);
        List<Lowering.Pass> passes = new ArrayList<>(loops.passes());
        passes.add(2, RENAME_LOOP_VARIABLES);
        return Lowering.pipeline().withPhase(new Lowering.Phase(loops.name(), passes));
    }

    @Test
    void aBrokenPassIsReportedByName() {
        Schedule s = Dags.tiledMatmulRelu(Dags.matmulRelu(15, 10, 7));
        assertThatThrownBy(
                        () -> broken().lower("f", s, Lowering.Options.defaults().withVerify(true)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining(
                        "function 'f': pass 'rename-loop-variables' (phase loops) made an ill-formed program")
                .hasMessageContaining("bound variables: variable '")
                .hasMessageContaining("' is used outside every loop or let that binds it, at `");
        // without verification the same program goes through, wrong
        PrimFunc f = broken().lower("f", s, Lowering.Options.defaults().withVerify(false));
        assertThat(f.toString()).contains("'");
    }

    @Test
    void theRunnerChecksItsInput() {
        Schedule s = Dags.tiledMatmulRelu(Dags.matmulRelu(15, 10, 7));
        PrimFunc loops = PassChecks.loops(s);
        PrimFunc bad = RENAME_LOOP_VARIABLES.run().apply(loops);
        assertThatThrownBy(() ->
                        Lowering.pipeline().run(bad, Lowering.Options.defaults().withVerify(true)))
                .hasMessageContaining("the input program (phase input) made an ill-formed program");
        assertThat(Lowering.pipeline().run(loops, Lowering.Options.defaults()).toString())
                .isEqualTo(Lowering.lower("f", s, Lowering.Options.defaults()).toString());
    }

    @Test
    void theDumpMarksUnchangedPassesAndTimesEach() {
        List<Lowering.PassRun> runs = new ArrayList<>();
        Schedule s = Dags.tiledMatmulRelu(Dags.matmulRelu(15, 10, 7));
        PrimFunc f = Lowering.lower("f", s, Lowering.Options.defaults().withListener(runs::add));
        assertThat(runs.stream().map(Lowering.PassRun::pass))
                .containsExactly(
                        "schedule-to-loops",
                        "simplify",
                        "unswitch-guards",
                        "partition-loops",
                        "simplify",
                        "legalize-vectorize",
                        "unroll-loops",
                        "flatten-buffers",
                        "simplify",
                        "remove-no-ops");
        assertThat(runs.stream().map(Lowering.PassRun::phase))
                .containsExactly(
                        "schedule",
                        "canonicalize",
                        "loops",
                        "loops",
                        "loops",
                        "loops",
                        "loops",
                        "flatten",
                        "cleanup",
                        "cleanup");
        assertThat(runs.getLast().func()).isSameAs(f);
        assertThat(runs).allSatisfy(r -> assertThat(r.nanos()).isNotNegative());
        assertThat(runs.getFirst().changed()).isTrue();
        assertThat(runs.get(1).changed()).isTrue(); // the first simplify always folds the schedule's arithmetic
        for (int k = 1; k < runs.size(); k++) {
            boolean same = runs.get(k).func().equals(runs.get(k - 1).func());
            assertThat(runs.get(k).changed()).as(runs.get(k).pass()).isEqualTo(!same);
            assertThat(runs.get(k).header())
                    .startsWith("// after " + runs.get(k).pass() + " ("
                            + runs.get(k).phase() + ", ")
                    .contains(" ms)")
                    .endsWith(same ? ": unchanged" : ")");
        }
        assertThat(runs.stream().filter(r -> !r.changed()))
                .as("an unchanged pass in this pipeline")
                .isNotEmpty();
    }

    @Test
    void aGpuScheduleOnACpuTargetIsIllFormed() {
        Schedule s = GpuSchedules.multiLevelTiling(
                GpuSchedules.matmul(8, 8, 4),
                "C",
                List.of("i", "j"),
                List.of("k"),
                List.of("A", "B"),
                GpuScheduleTest.tiles(new int[][] {{1, 2, 2, 1}, {1, 2, 2, 1}}, new int[][] {{2, 1}}));
        assertThatThrownBy(() ->
                        Lowering.lower("f", s, CPU, Lowering.Options.defaults().withVerify(true)))
                .hasMessageContaining(
                        "'schedule-to-loops' (phase schedule) made an ill-formed program: thread bindings");
        Lowering.lower("f", s, Target.cuda(), Lowering.Options.defaults().withVerify(true));
    }
}
