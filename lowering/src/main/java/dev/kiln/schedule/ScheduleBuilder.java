package dev.kiln.schedule;

import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The fluent way for a person to write a schedule. Stages and loops are named as in TVM and
 * Ansor ({@code i.0}, {@code i.1} after a split; {@code i.outer} and {@code i.inner} also work for
 * a split in two; {@code i.0@j.0@} after a fuse). Every call applies its step at once, so a
 * mistake throws where it is made, naming the step and the reason.
 *
 * <pre>{@code
 * ScheduleBuilder s = ScheduleBuilder.on(dag);
 * var C = s.stage("C");
 * var ij = C.split("i", 32);             // [i.0, i.1]
 * var jj = C.split("j", 64);             // [j.0, j.1]
 * C.reorder("i.0", "j.0", "k", "i.1", "j.1");
 * C.parallel(C.fuse("i.0", "j.0"));
 * C.vectorize("j.1");
 * Schedule schedule = s.build();
 * }</pre>
 */
public final class ScheduleBuilder {
    private LoopState state;

    private ScheduleBuilder(ComputeDAG dag) {
        this.state = LoopState.initial(dag);
    }

    public static ScheduleBuilder on(ComputeDAG dag) {
        if (dag == null) throw new ScheduleException("ScheduleBuilder.on: the DAG is null");
        return new ScheduleBuilder(dag);
    }

    /** The stage computing the operation called {@code name}. */
    public StageRef stage(String name) {
        if (name == null) throw new ScheduleException("stage: the stage name is null");
        state.stageIndex(name);
        return new StageRef(name);
    }

    /** The stage computing tensor {@code t}. */
    public StageRef stage(Tensor t) {
        if (t == null) throw new ScheduleException("stage: the tensor is null");
        return new StageRef(state.stages().get(state.stageIndex(t)).name());
    }

    /** The loop state after the steps so far. */
    public LoopState state() {
        return state;
    }

    /** The index of the last step applied (for follow_split). */
    public int lastStep() {
        return state.steps().size() - 1;
    }

    public Schedule build() {
        return new Schedule(state.dag(), state.steps());
    }

    private void apply(Step step) {
        state = state.apply(step);
    }

    /** A loop of a stage, by name. */
    public record Loop(String stage, String name) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** A stage, by the name of its operation. */
    public final class StageRef {
        private final String name;

        private StageRef(String name) {
            this.name = name;
        }

        public String name() {
            return name;
        }

        private int id() {
            return state.stageIndex(name);
        }

        private int loopIndex(String loop) {
            if (loop == null) throw new ScheduleException("stage '" + name + "': the loop name is null");
            return state.stage(id()).indexOf(loop);
        }

        private String loopName(Loop loop) {
            if (loop == null) throw new ScheduleException("stage '" + name + "': the loop is null");
            if (!loop.stage().equals(name)) {
                throw new ScheduleException(
                        "stage '" + name + "': loop '" + loop.name() + "' belongs to stage '" + loop.stage() + "'");
            }
            return loop.name();
        }

        private String[] loopNames(Loop[] loops) {
            if (loops == null) throw new ScheduleException("stage '" + name + "': the loops are null");
            return Arrays.stream(loops).map(this::loopName).toArray(String[]::new);
        }

        private <T> T[] requireArray(String what, String step, T[] a) {
            if (a == null) throw new ScheduleException("stage '" + name + "', " + step + ": the " + what + " are null");
            return a;
        }

        private String requireText(String what, String step, String v) {
            if (v == null) throw new ScheduleException("stage '" + name + "', " + step + ": the " + what + " is null");
            return v;
        }

        /** The current loops, outermost first. */
        public List<Loop> loops() {
            return state.stage(id()).iters().stream()
                    .map(it -> new Loop(name, it.name()))
                    .toList();
        }

        public Loop loop(String loop) {
            return new Loop(name, state.stage(id()).iter(loopIndex(loop)).name());
        }

        private List<Loop> loopsAt(int first, int count) {
            List<Loop> out = new ArrayList<>();
            for (int k = 0; k < count; k++)
                out.add(new Loop(name, state.stage(id()).iter(first + k).name()));
            return out;
        }

        /**
         * Splits a loop by tile sizes (outer to inner); returns the new loops, outermost first. A null size is
         * undecided.
         */
        public List<Loop> split(String loop, Integer... factors) {
            requireArray("factors", "split of '" + loop + "'", factors);
            int at = loopIndex(loop);
            apply(new SplitStep(id(), at, state.stage(id()).iter(at).extent(), Arrays.asList(factors), true));
            return loopsAt(at, factors.length + 1);
        }

        public List<Loop> split(Loop loop, Integer... factors) {
            return split(loopName(loop), factors);
        }

        /** Splits a loop into the given numbers of parts (outer to inner); returns the new loops. */
        public List<Loop> splitParts(String loop, Integer... nparts) {
            requireArray("numbers of parts", "split of '" + loop + "'", nparts);
            int at = loopIndex(loop);
            apply(new SplitStep(id(), at, state.stage(id()).iter(at).extent(), Arrays.asList(nparts), false));
            return loopsAt(at, nparts.length + 1);
        }

        /** Splits a loop like earlier split step {@code srcStep}, into {@code nSplit + 1} loops. */
        public List<Loop> followSplit(String loop, int srcStep, int nSplit) {
            int at = loopIndex(loop);
            apply(new FollowSplitStep(id(), at, srcStep, nSplit));
            return loopsAt(at, nSplit + 1);
        }

        /** Splits a loop in two by the product of the lengths at {@code level} of the given split steps. */
        public List<Loop> followFusedSplit(String loop, List<Integer> srcSteps, int level, boolean factor) {
            if (srcSteps == null || srcSteps.contains(null)) {
                throw new ScheduleException("stage '" + name + "', follow_fused_split of '" + loop
                        + "': the source steps " + srcSteps + " are null or hold a null");
            }
            int at = loopIndex(loop);
            apply(new FollowFusedSplitStep(id(), at, srcSteps, level, factor));
            return loopsAt(at, 2);
        }

        /** Fuses adjacent loops; returns the fused loop. */
        public Loop fuse(String... loops) {
            requireArray("loops", "fuse", loops);
            List<Integer> ids = Arrays.stream(loops).map(this::loopIndex).toList();
            apply(new FuseStep(id(), ids));
            return new Loop(name, state.stage(id()).iter(ids.get(0)).name());
        }

        public Loop fuse(Loop... loops) {
            return fuse(loopNames(loops));
        }

        /** Puts the loops in this order; every loop of the stage must be listed. */
        public StageRef reorder(String... loops) {
            requireArray("loops", "reorder", loops);
            apply(new ReorderStep(
                    id(), Arrays.stream(loops).map(this::loopIndex).toList()));
            return this;
        }

        public StageRef reorder(Loop... loops) {
            return reorder(loopNames(loops));
        }

        public StageRef computeAt(StageRef target, String loop) {
            if (target == null)
                throw new ScheduleException("stage '" + name + "', compute_at: the target stage is null");
            apply(new ComputeAtStep(id(), target.id(), target.loopIndex(loop)));
            return this;
        }

        public StageRef computeAt(StageRef target, Loop loop) {
            if (target == null)
                throw new ScheduleException("stage '" + name + "', compute_at: the target stage is null");
            return computeAt(target, target.loopName(loop));
        }

        public StageRef computeAt(String target, String loop) {
            requireText("target stage name", "compute_at", target);
            return computeAt(stage(target), loop);
        }

        public StageRef computeInline() {
            apply(new ComputeInlineStep(id()));
            return this;
        }

        public StageRef computeRoot() {
            apply(new ComputeRootStep(id()));
            return this;
        }

        /**
         * Moves the computation into a new stage {@code name.scope} and returns it; this stage copies its result out.
         */
        public StageRef cacheWrite(String scope) {
            requireText("scope", "cache_write", scope);
            apply(new CacheWriteStep(id(), scope));
            return new StageRef(name + "." + scope);
        }

        /** Makes the readers read a copy of this stage's tensor in {@code scope}; returns the copy's stage. */
        public StageRef cacheRead(String scope, StageRef... readers) {
            requireText("scope", "cache_read", scope);
            for (StageRef reader : requireArray("readers", "cache_read", readers)) {
                if (reader == null) throw new ScheduleException("stage '" + name + "', cache_read: a reader is null");
            }
            List<Integer> ids = Arrays.stream(readers).map(StageRef::id).toList();
            String tensor = state.stage(id()).op().output(0).name();
            apply(new CacheReadStep(id(), scope, ids));
            return new StageRef(tensor + "." + scope);
        }

        public StageRef cacheRead(String scope, String... readers) {
            requireArray("readers", "cache_read", readers);
            return cacheRead(
                    scope,
                    Arrays.stream(readers)
                            .map(r -> stage(requireText("reader name", "cache_read", r)))
                            .toArray(StageRef[]::new));
        }

        /** Factors reduction loop {@code loop} out into a new stage {@code name.rf}; returns it. */
        public StageRef rfactor(String loop, int factorAxis) {
            apply(new RfactorStep(id(), loopIndex(loop), factorAxis));
            return new StageRef(name + ".rf");
        }

        public StageRef annotate(String loop, IterAnnotation a) {
            if (a == null)
                throw new ScheduleException("stage '" + name + "', annotate '" + loop + "': the annotation is null");
            apply(new AnnotationStep(id(), loopIndex(loop), a));
            return this;
        }

        public StageRef parallel(String loop) {
            return annotate(loop, IterAnnotation.PARALLEL);
        }

        public StageRef parallel(Loop loop) {
            return parallel(loopName(loop));
        }

        public StageRef vectorize(String loop) {
            return annotate(loop, IterAnnotation.VECTORIZE);
        }

        public StageRef vectorize(Loop loop) {
            return vectorize(loopName(loop));
        }

        public StageRef unroll(String loop) {
            return annotate(loop, IterAnnotation.UNROLL);
        }

        public StageRef unroll(Loop loop) {
            return unroll(loopName(loop));
        }

        /** Binds a loop to a GPU thread axis: "blockIdx.x", "threadIdx.y", "vthread", ... */
        public StageRef bind(String loop, String threadAxis) {
            requireText("thread axis", "bind '" + loop + "'", threadAxis);
            IterAnnotation a;
            try {
                a = IterAnnotation.parse(threadAxis);
            } catch (dev.kiln.ir.KilnException e) {
                throw new ScheduleException("stage '" + name + "', bind '" + loop + "': " + e.getMessage());
            }
            return annotate(loop, a);
        }

        public StageRef bind(Loop loop, String threadAxis) {
            return bind(loopName(loop), threadAxis);
        }

        public StageRef pragma(String loop, String pragma) {
            requireText("pragma", "pragma '" + loop + "'", pragma);
            apply(new PragmaStep(id(), loopIndex(loop), pragma));
            return this;
        }

        /** Ansor's auto-unroll: unroll loop nests of this stage with at most {@code steps} iterations in all. */
        public StageRef autoUnrollMaxStep(String loop, int steps) {
            return pragma(loop, PragmaStep.AUTO_UNROLL + "$" + steps);
        }

        /**
         * Runs the loop nest from {@code loop} inward as tensor intrinsic {@code intrinsic} (a name of
         * {@link TensorIntrinsics}); see {@link TensorizeStep}.
         */
        public StageRef tensorize(String loop, String intrinsic) {
            requireText("tensorize", "tensorize '" + loop + "'", intrinsic);
            apply(new TensorizeStep(id(), loopIndex(loop), intrinsic));
            return this;
        }

        public StageRef storageAlign(int dim, int factor, int offset) {
            apply(new StorageAlignStep(id(), dim, factor, offset));
            return this;
        }

        /**
         * Stores dimension {@code dim} of the stage's buffer in blocks of {@code factor}, block index outermost (a
         * packed panel); factor 0 takes the reader's innermost tile of that dimension. See {@link StorageBlockStep}.
         */
        public StageRef storageBlock(int dim, int factor) {
            apply(new StorageBlockStep(id(), dim, factor));
            return this;
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
