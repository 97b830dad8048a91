package dev.kiln.autoschedule.sketch;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The packing sketch rule: which operands, where the copy goes, and that the programs stay correct. */
class AddCacheReadPackTest {

    private static long packed(List<Sketch> s) {
        return s.stream()
                .filter(k -> k.steps().stream().anyMatch(x -> x instanceof CacheReadStep))
                .count();
    }

    @Test
    void matmulGetsTwinsWithBPackedAndWithBothPacked() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        List<Sketch> ansor = TargetRules.ansorCpu().sketches(task);
        assertThat(packed(ansor)).isZero();
        // Kiln's default: per Ansor sketch, no copy and B's copy
        List<Sketch> dflt = TargetRules.cpu().sketches(task);
        assertThat(dflt).hasSize(2 * ansor.size());
        assertThat(packed(dflt)).isEqualTo(ansor.size());
        assertThat(dflt).allMatch(k -> k.state().stages().stream()
                .noneMatch(x -> x.name().equals("A.local")));
        // with row packing: no copy, B's copy, and A's and B's (A only where B is packed)
        List<Sketch> kiln = TargetRules.cpu().withRowPacking().sketches(task);
        assertThat(kiln).hasSize(3 * ansor.size());
        assertThat(packed(kiln)).isEqualTo(2 * ansor.size());
        int both = 0;
        for (Sketch k : kiln) {
            if (k.steps().stream().noneMatch(x -> x instanceof CacheReadStep)) continue;
            LoopState s = k.state();
            List<String> names = s.stages().stream().map(Stage::name).toList();
            assertThat(names).contains("B.local");
            if (names.contains("A.local")) both++;
            for (int id = 0; id < s.stages().size(); id++) {
                Stage copy = s.stage(id);
                boolean isCopy = copy.name().equals("A.local") || copy.name().equals("B.local");
                assertThat(AddCacheReadPack.isPackingCopy(s, id))
                        .as(copy.name())
                        .isEqualTo(isCopy);
                if (!isCopy) continue;
                assertThat(copy.computeAt()).isEqualTo(ComputeAtKind.ITER);
                Stage reader = s.stage(copy.attachStage());
                int at = reader.indexOfUid(copy.attachIter());
                assertThat(reader.iter(at).kind()).isEqualTo(IterKind.REDUCE);
                assertThat(reader.iter(at).name()).isEqualTo("k.0");
            }
        }
        assertThat(both).isEqualTo(ansor.size());
    }

    @Test
    void aLayoutFreeOperandGetsNoPerCallCopy() {
        // B (argument 1) constant: the layout rewrite packs it once for the tiles, so no sketch copies it per call
        SearchTask plain = Workloads.task(Workloads.matmul(64, 64, 64));
        SearchTask constantB = plain.withLayoutFree(List.of(1));
        List<Sketch> ansor = TargetRules.ansorCpu().sketches(constantB);
        List<Sketch> dflt = TargetRules.cpu().sketches(constantB);
        assertThat(packed(TargetRules.cpu().sketches(plain))).isPositive();
        assertThat(dflt).hasSize(ansor.size());
        assertThat(packed(dflt)).isZero();
        // A is not constant: with row packing it is still offered only where B is packed, so nowhere
        assertThat(packed(TargetRules.cpu().withRowPacking().sketches(constantB)))
                .isZero();
    }

    @Test
    void operandsReadAlongTheReductionAreNotPacked() {
        // dense with weights W[N, K]: the vector axis j indexes W's first dimension, k its last
        Tensor x = Te.placeholder("X", FLOAT32, 32, 64);
        Tensor w = Te.placeholder("W", FLOAT32, 48, 64);
        ComputeDAG dense = ComputeDAG.of(Te.compute(
                "Y", Te.shape(32, 48), (i, j) -> Te.sum(64, k -> x.at(i, k).mul(w.at(j, k)))));
        assertThat(packed(TargetRules.cpu().sketches(Workloads.task(dense)))).isZero();
    }

    @Test
    void batchMatmulPacksItsRightOperand() {
        Tensor a = Te.placeholder("X", FLOAT32, 2, 32, 16);
        Tensor b = Te.placeholder("Y", FLOAT32, 2, 16, 48);
        ComputeDAG dag = ComputeDAG.of(Linalg.batchMatmul(a, b));
        List<Sketch> kiln = TargetRules.cpu().sketches(Workloads.task(dag));
        assertThat(packed(kiln)).isPositive();
        for (Sketch k : kiln) {
            long reads =
                    k.steps().stream().filter(x -> x instanceof CacheReadStep).count();
            List<String> copies = k.state().stages().stream()
                    .map(Stage::name)
                    .filter(n -> n.endsWith(".local") && !n.startsWith("batch"))
                    .toList();
            // Y (read with the vector axis) is packed; X (read along the reduction) only with it
            assertThat(copies).hasSize((int) reads).isSubsetOf("Y.local", "X.local");
            if (copies.contains("X.local")) assertThat(copies).contains("Y.local");
        }
    }

    @Test
    void sampledPackedProgramsComputeTheReference() {
        ComputeDAG dag = Workloads.matmul(32, 48, 64);
        SearchTask task = Workloads.task(dag);
        TargetRules rules = TargetRules.cpu().withRowPacking();
        List<Sketch> packed = rules.sketches(task).stream()
                .filter(k -> k.steps().stream().anyMatch(x -> x instanceof CacheReadStep))
                .toList();
        InitPopulation.Result res = rules.population(task, packed).sample(30, new SplittableRandom(3));
        assertThat(res.candidates()).hasSize(30);
        List<NDArray> in = List.of(NDArray.random(FLOAT32, 1, 32, 64), NDArray.random(FLOAT32, 2, 64, 48));
        NDArray expected = run(LowerDefault.lower("ref", dag), in);
        int kept = 0, copies = 0, withA = 0;
        for (Candidate c : res.candidates()) {
            assertThat(run(Lowering.lower("packed", c.schedule()), in)
                            .compareTo(expected, 1e-4, 1e-4)
                            .ok())
                    .as(c.key())
                    .isTrue();
            for (int id = 0; id < c.state().stages().size(); id++) {
                if (!AddCacheReadPack.isPackingCopy(c.state(), id)) continue;
                copies++;
                if (c.state().stage(id).computeAt() == ComputeAtKind.ITER) kept++;
            }
            if (c.state().stages().stream().anyMatch(st -> st.name().equals("A.local"))) withA++;
        }
        // the annotation keeps every copy where its sketch put it; about half the programs also pack A
        assertThat(kept).isEqualTo(copies);
        assertThat(withA).isBetween(5, res.candidates().size() - 5);
    }

    @Test
    void sameSeedSameSamples() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        List<Sketch> sk = TargetRules.cpu().sketches(task);
        List<String> a = new ArrayList<>(), b = new ArrayList<>();
        for (Candidate c : TargetRules.cpu()
                .population(task, sk)
                .sample(20, new SplittableRandom(9))
                .candidates()) a.add(c.key());
        for (Candidate c : TargetRules.cpu()
                .population(task, sk)
                .sample(20, new SplittableRandom(9))
                .candidates()) b.add(c.key());
        assertThat(a).isEqualTo(b);
    }

    private static NDArray run(PrimFunc f, List<NDArray> inputs) {
        NDArray out = NDArray.allocate(FLOAT32, 32, 48);
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(out);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return out;
    }
}
