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
    void matmulGetsAPackedTwinOfEveryAnsorSketch() {
        SearchTask task = Workloads.task(Workloads.matmul(64, 64, 64));
        List<Sketch> ansor = TargetRules.ansorCpu().sketches(task);
        List<Sketch> kiln = TargetRules.cpu().sketches(task);
        assertThat(packed(ansor)).isZero();
        assertThat(kiln).hasSize(2 * ansor.size());
        assertThat(packed(kiln)).isEqualTo(ansor.size());
        for (Sketch k : kiln) {
            if (k.steps().stream().noneMatch(x -> x instanceof CacheReadStep)) continue;
            LoopState s = k.state();
            // A, B, B.local, then the tiled reader (and its consumer): only B is packed, A is read along k
            assertThat(s.stage(2).name()).isEqualTo("B.local");
            assertThat(s.stage(0).name()).isEqualTo("A");
            Stage copy = s.stage(2);
            assertThat(copy.computeAt()).isEqualTo(ComputeAtKind.ITER);
            Stage reader = s.stage(copy.attachStage());
            int at = reader.indexOfUid(copy.attachIter());
            assertThat(reader.iter(at).kind()).isEqualTo(IterKind.REDUCE);
            assertThat(reader.iter(at).name()).isEqualTo("k.0");
            assertThat(AddCacheReadPack.isPackingCopy(s, 2)).isTrue();
            assertThat(AddCacheReadPack.isPackingCopy(s, 1)).isFalse();
            assertThat(AddCacheReadPack.isPackingCopy(s, 3)).isFalse();
        }
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
            for (var st : k.steps())
                if (st instanceof CacheReadStep cr)
                    assertThat(k.state().stage(cr.stageId()).name()).isEqualTo("Y");
        }
    }

    @Test
    void sampledPackedProgramsComputeTheReference() {
        ComputeDAG dag = Workloads.matmul(32, 48, 64);
        SearchTask task = Workloads.task(dag);
        List<Sketch> packed = TargetRules.cpu().sketches(task).stream()
                .filter(k -> k.steps().stream().anyMatch(x -> x instanceof CacheReadStep))
                .toList();
        InitPopulation.Result res = TargetRules.cpu().population(task, packed).sample(30, new SplittableRandom(3));
        assertThat(res.candidates()).hasSize(30);
        List<NDArray> in = List.of(NDArray.random(FLOAT32, 1, 32, 64), NDArray.random(FLOAT32, 2, 64, 48));
        NDArray expected = run(LowerDefault.lower("ref", dag), in);
        int kept = 0;
        for (Candidate c : res.candidates()) {
            assertThat(run(Lowering.lower("packed", c.schedule()), in)
                            .compareTo(expected, 1e-4, 1e-4)
                            .ok())
                    .as(c.key())
                    .isTrue();
            int copy = c.state().stages().stream().map(Stage::name).toList().indexOf("B.local");
            if (c.state().stage(copy).computeAt() == ComputeAtKind.ITER) kept++;
        }
        // the annotation keeps the copy where its sketch put it
        assertThat(kept).isEqualTo(res.candidates().size());
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
