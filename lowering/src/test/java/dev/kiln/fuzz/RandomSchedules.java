package dev.kiln.fuzz;

import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.ComputeInlineStep;
import dev.kiln.schedule.ComputeRootStep;
import dev.kiln.schedule.FollowSplitStep;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.Step;
import dev.kiln.schedule.StorageAlignStep;
import dev.kiln.schedule.StorageBlockStep;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Random valid schedules for differential testing: random steps of every kind, each kept only
 * if it applies (an illegal step is counted and dropped), so the result replays by construction.
 */
public final class RandomSchedules {
    private final SplittableRandom rng;
    private final boolean gpuBindings;
    private int rejected;

    private RandomSchedules(SplittableRandom rng, boolean gpuBindings) {
        this.rng = rng;
        this.gpuBindings = gpuBindings;
    }

    /** The generated schedule and how many proposed steps were illegal. */
    public record Result(Schedule schedule, int rejected) {}

    public static Result generate(ComputeDAG dag, SplittableRandom rng, boolean gpuBindings) {
        RandomSchedules g = new RandomSchedules(rng, gpuBindings);
        LoopState s = LoopState.initial(dag);
        int want = rng.nextInt(14);
        for (int attempt = 0; attempt < 60 && s.steps().size() < want; attempt++) {
            Step step = g.propose(s);
            if (step == null) continue;
            try {
                s = s.apply(step);
            } catch (ScheduleException e) {
                g.rejected++;
            }
        }
        return new Result(new Schedule(dag, s.steps()), g.rejected);
    }

    private Step propose(LoopState s) {
        List<Integer> stages = new ArrayList<>();
        for (int i = 0; i < s.stages().size(); i++) {
            Stage st = s.stages().get(i);
            if (!st.isPlaceholder() && st.computeAt() != ComputeAtKind.INLINED) stages.add(i);
        }
        if (stages.isEmpty()) return null;
        int id = stages.get(rng.nextInt(stages.size()));
        Stage st = s.stages().get(id);
        int n = st.leaves().size();
        if (n == 0) return null;
        int loop = rng.nextInt(n);
        Iter it = st.iter(loop);
        return switch (rng.nextInt(16)) {
            case 0, 1, 2 -> split(id, loop, it);
            case 3 -> n > 1 ? new FuseStep(id, List.of(Math.min(loop, n - 2), Math.min(loop, n - 2) + 1)) : null;
            case 4 -> {
                List<Integer> perm = new ArrayList<>();
                for (int k = 0; k < n; k++) perm.add(k);
                Collections.shuffle(perm, new java.util.Random(rng.nextLong()));
                yield new ReorderStep(id, perm);
            }
            case 5, 6 -> {
                List<Integer> consumers = s.consumers(id);
                if (consumers.isEmpty()) yield null;
                int target = consumers.get(rng.nextInt(consumers.size()));
                int tl = s.stages().get(target).leaves().size();
                yield tl == 0 ? null : new ComputeAtStep(id, target, rng.nextInt(tl));
            }
            case 7 -> rng.nextBoolean() ? new ComputeInlineStep(id) : new ComputeRootStep(id);
            case 8 -> new CacheWriteStep(id, rng.nextBoolean() ? "local" : "global");
            case 9 -> {
                List<Integer> producers = s.directProducers(id);
                if (producers.isEmpty()) yield null;
                yield new CacheReadStep(
                        producers.get(rng.nextInt(producers.size())),
                        rng.nextBoolean() ? "shared" : "local",
                        List.of(id));
            }
            case 10 ->
                it.kind() == IterKind.REDUCE
                        ? new RfactorStep(
                                id, loop, rng.nextInt(st.computeOp().axes().size() + 1))
                        : null;
            // the CPU runtimes run one level of parallel loops (a nested one is refused, naming it): one per stage
            case 11 ->
                !gpuBindings && st.iters().stream().anyMatch(x -> x.annotation() == IterAnnotation.PARALLEL)
                        ? null
                        : new AnnotationStep(id, loop, IterAnnotation.PARALLEL);
            case 12 ->
                new AnnotationStep(id, n - 1, rng.nextBoolean() ? IterAnnotation.VECTORIZE : IterAnnotation.UNROLL);
            case 13 ->
                gpuBindings
                        ? new AnnotationStep(id, loop, gpuAxis())
                        : new AnnotationStep(id, loop, IterAnnotation.UNROLL);
            case 14 ->
                new PragmaStep(
                        id,
                        0,
                        PragmaStep.AUTO_UNROLL + "$" + List.of(0, 4, 16, 64).get(rng.nextInt(4)));
            default -> {
                int lastSplit = -1;
                for (int k = 0; k < s.steps().size(); k++) if (s.steps().get(k) instanceof SplitStep) lastSplit = k;
                if (lastSplit >= 0 && rng.nextBoolean()) {
                    SplitStep src = (SplitStep) s.steps().get(lastSplit);
                    yield new FollowSplitStep(
                            id, loop, lastSplit, 1 + rng.nextInt(src.lengths().size()));
                }
                if (rng.nextBoolean()) {
                    // blocked storage: the reader's tile (0, refused where no one axis reads the dimension) or 1-5
                    yield new StorageBlockStep(
                            id, rng.nextInt(st.computeOp().axes().size()), rng.nextInt(6));
                }
                yield st.computeOp().axes().size() > 1 ? new StorageAlignStep(id, 0, 4, rng.nextInt(4)) : null;
            }
        };
    }

    private Step split(int id, int loop, Iter it) {
        long ext = it.extent() == null ? 8 : it.extent();
        int levels = 1 + rng.nextInt(2);
        List<Integer> lengths = new ArrayList<>();
        for (int k = 0; k < levels; k++) {
            // mostly divisors-ish small factors, sometimes a factor that does not divide (a guard)
            lengths.add(1 + rng.nextInt((int) Math.min(ext + 1, 6)));
        }
        return new SplitStep(id, loop, it.extent(), lengths, rng.nextInt(5) != 0);
    }

    private IterAnnotation gpuAxis() {
        IterAnnotation[] axes = {
            IterAnnotation.BLOCK_X,
            IterAnnotation.THREAD_X,
            IterAnnotation.BLOCK_Y,
            IterAnnotation.THREAD_Y,
            IterAnnotation.VTHREAD
        };
        return axes[rng.nextInt(axes.length)];
    }
}
