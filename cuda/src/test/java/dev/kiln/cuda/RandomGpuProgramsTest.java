package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.fuzz.RandomComputations;
import dev.kiln.fuzz.RandomSchedules;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Random computations under random schedules (the lowering's differential generator: splits,
 * reorders, compute_at, cache stages, rfactor, unroll and vectorize, storage_align), each then
 * made a GPU program by binding the leading spatial loops of every root stage to blockIdx.x and
 * threadIdx.x. The programs the GPU passes accept (the others break a GPU rule, which is their
 * business) must run in the interpreter to the default lowering's numbers and compile with nvcc:
 * code generation meets shapes no hand schedule has.
 */
class RandomGpuProgramsTest {
    static final int CASES = 150;

    /** The random schedule's steps, without parallel annotations, then bindings of every root stage. */
    static Schedule gpuVersion(ComputeDAG dag, Schedule random, SplittableRandom rng) {
        LoopState s = LoopState.initial(dag);
        for (Step step : random.steps()) {
            if (step instanceof AnnotationStep a && a.annotation() == IterAnnotation.PARALLEL) continue;
            try {
                s = s.apply(step);
            } catch (KilnException e) {
                // a step that needed a dropped one
            }
        }
        for (int id = 0; id < s.stages().size(); id++) {
            Stage st = s.stage(id);
            if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT) continue;
            List<Integer> lead = new ArrayList<>();
            long extent = 1;
            List<Iter> its = st.iters();
            for (int i = 0;
                    i < its.size()
                            && its.get(i).kind() == IterKind.SPATIAL
                            && its.get(i).annotation() == IterAnnotation.NONE
                            && its.get(i).extent() != null;
                    i++) {
                lead.add(i);
                extent *= its.get(i).extent();
                if (!s.attachedTo(id).isEmpty()) break;
            }
            if (lead.isEmpty()) continue;
            try {
                LoopState t = lead.size() > 1 ? s.apply(new FuseStep(id, lead)) : s;
                int threads = 1 + rng.nextInt(64);
                if (extent > threads) {
                    t = t.apply(new SplitStep(id, 0, extent, List.of(threads), true));
                    t = t.apply(new AnnotationStep(id, 0, IterAnnotation.BLOCK_X))
                            .apply(new AnnotationStep(id, 1, IterAnnotation.THREAD_X));
                } else {
                    t = t.apply(new AnnotationStep(id, 0, IterAnnotation.THREAD_X));
                }
                s = t;
            } catch (KilnException e) {
                // leave the stage unbound: the GPU passes will refuse the program
            }
        }
        return new Schedule(dag, s.steps());
    }

    @Test
    void programsTheGpuPassesAcceptComputeTheReferenceAndCompile() {
        List<String> failures = new ArrayList<>();
        List<CudaModule> modules = new ArrayList<>();
        int accepted = 0;
        for (int c = 0; c < CASES; c++) {
            SplittableRandom rng = new SplittableRandom(0x6b75L + c);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule s =
                    gpuVersion(dag, RandomSchedules.generate(dag, rng, false).schedule(), rng);
            PrimFunc f;
            try {
                f = GpuTesting.lower("random_gpu_" + c, s);
            } catch (KilnException refused) {
                continue;
            }
            accepted++;
            try {
                String diff = GpuTesting.compareWithDefault(dag, f, c, 1e-4);
                if (diff != null) failures.add("case " + c + ": " + diff);
                modules.add(CudaCodegen.generate(f));
            } catch (RuntimeException e) {
                failures.add("case " + c + ": " + e + "\n" + s.toJavaSource() + "\n" + f);
            }
        }
        System.out.println("random GPU programs: " + accepted + " of " + CASES + " accepted by the GPU passes");
        assertThat(failures).isEmpty();
        assertThat(accepted).isGreaterThan(CASES / 4);
        GpuTesting.assumeNvcc();
        String ptx = String.join("\n", GpuTesting.compileWithNvcc(modules));
        assertThat(ptx.lines().filter(l -> l.startsWith(".visible .entry")).count())
                .isEqualTo(modules.stream().mapToLong(m -> m.launches().size()).sum());
    }
}
