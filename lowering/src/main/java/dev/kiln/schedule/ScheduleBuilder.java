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
        return new ScheduleBuilder(dag);
    }

    /** The stage computing the operation called {@code name}. */
    public StageRef stage(String name) {
        state.stageIndex(name);
        return new StageRef(name);
    }

    /** The stage computing tensor {@code t}. */
    public StageRef stage(Tensor t) {
        return new StageRef(state.stages().get(state.stageIndex(t)).name());
    }

    /** The loop state after the steps so far. */
    public LoopState state() { return state; }

    /** The index of the last step applied (for follow_split). */
    public int lastStep() { return state.steps().size() - 1; }

    public Schedule build() {
        return new Schedule(state.dag(), state.steps());
    }

    private void apply(Step step) {
        state = state.apply(step);
    }

    /** A loop of a stage, by name. */
    public record Loop(String stage, String name) {
        @Override
        public String toString() { return name; }
    }

    /** A stage, by the name of its operation. */
    public final class StageRef {
        private final String name;

        private StageRef(String name) { this.name = name; }

        public String name() { return name; }

        private int id() { return state.stageIndex(name); }

        private int loopIndex(String loop) { return state.stage(id()).indexOf(loop); }

        /** The current loops, outermost first. */
        public List<Loop> loops() {
            return state.stage(id()).iters().stream().map(it -> new Loop(name, it.name())).toList();
        }

        public Loop loop(String loop) {
            return new Loop(name, state.stage(id()).iter(loopIndex(loop)).name());
        }

        private List<Loop> loopsAt(int first, int count) {
            List<Loop> out = new ArrayList<>();
            for (int k = 0; k < count; k++) out.add(new Loop(name, state.stage(id()).iter(first + k).name()));
            return out;
        }

        /** Splits a loop by tile sizes (outer to inner); returns the new loops, outermost first. A null size is undecided. */
        public List<Loop> split(String loop, Integer... factors) {
            int at = loopIndex(loop);
            apply(new SplitStep(id(), at, state.stage(id()).iter(at).extent(), Arrays.asList(factors), true));
            return loopsAt(at, factors.length + 1);
        }

        public List<Loop> split(Loop loop, Integer... factors) { return split(loop.name(), factors); }

        /** Splits a loop into the given numbers of parts (outer to inner); returns the new loops. */
        public List<Loop> splitParts(String loop, Integer... nparts) {
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
            int at = loopIndex(loop);
            apply(new FollowFusedSplitStep(id(), at, srcSteps, level, factor));
            return loopsAt(at, 2);
        }

        /** Fuses adjacent loops; returns the fused loop. */
        public Loop fuse(String... loops) {
            List<Integer> ids = Arrays.stream(loops).map(this::loopIndex).toList();
            apply(new FuseStep(id(), ids));
            return new Loop(name, state.stage(id()).iter(ids.get(0)).name());
        }

        public Loop fuse(Loop... loops) { return fuse(Arrays.stream(loops).map(Loop::name).toArray(String[]::new)); }

        /** Puts the loops in this order; every loop of the stage must be listed. */
        public StageRef reorder(String... loops) {
            apply(new ReorderStep(id(), Arrays.stream(loops).map(this::loopIndex).toList()));
            return this;
        }

        public StageRef reorder(Loop... loops) { return reorder(Arrays.stream(loops).map(Loop::name).toArray(String[]::new)); }

        public StageRef computeAt(StageRef target, String loop) {
            apply(new ComputeAtStep(id(), target.id(), target.loopIndex(loop)));
            return this;
        }

        public StageRef computeAt(StageRef target, Loop loop) { return computeAt(target, loop.name()); }

        public StageRef computeAt(String target, String loop) { return computeAt(new StageRef(target), loop); }

        public StageRef computeInline() {
            apply(new ComputeInlineStep(id()));
            return this;
        }

        public StageRef computeRoot() {
            apply(new ComputeRootStep(id()));
            return this;
        }

        /** Moves the computation into a new stage {@code name.scope} and returns it; this stage copies its result out. */
        public StageRef cacheWrite(String scope) {
            apply(new CacheWriteStep(id(), scope));
            return new StageRef(name + "." + scope);
        }

        /** Makes the readers read a copy of this stage's tensor in {@code scope}; returns the copy's stage. */
        public StageRef cacheRead(String scope, StageRef... readers) {
            List<Integer> ids = Arrays.stream(readers).map(StageRef::id).toList();
            String tensor = state.stage(id()).op().output(0).name();
            apply(new CacheReadStep(id(), scope, ids));
            return new StageRef(tensor + "." + scope);
        }

        public StageRef cacheRead(String scope, String... readers) {
            return cacheRead(scope, Arrays.stream(readers).map(StageRef::new).toArray(StageRef[]::new));
        }

        /** Factors reduction loop {@code loop} out into a new stage {@code name.rf}; returns it. */
        public StageRef rfactor(String loop, int factorAxis) {
            apply(new RfactorStep(id(), loopIndex(loop), factorAxis));
            return new StageRef(name + ".rf");
        }

        public StageRef annotate(String loop, IterAnnotation a) {
            apply(new AnnotationStep(id(), loopIndex(loop), a));
            return this;
        }

        public StageRef parallel(String loop) { return annotate(loop, IterAnnotation.PARALLEL); }
        public StageRef parallel(Loop loop) { return parallel(loop.name()); }
        public StageRef vectorize(String loop) { return annotate(loop, IterAnnotation.VECTORIZE); }
        public StageRef vectorize(Loop loop) { return vectorize(loop.name()); }
        public StageRef unroll(String loop) { return annotate(loop, IterAnnotation.UNROLL); }
        public StageRef unroll(Loop loop) { return unroll(loop.name()); }

        /** Binds a loop to a GPU thread axis: "blockIdx.x", "threadIdx.y", "vthread", ... */
        public StageRef bind(String loop, String threadAxis) { return annotate(loop, IterAnnotation.parse(threadAxis)); }
        public StageRef bind(Loop loop, String threadAxis) { return bind(loop.name(), threadAxis); }

        public StageRef pragma(String loop, String pragma) {
            apply(new PragmaStep(id(), loopIndex(loop), pragma));
            return this;
        }

        /** Ansor's auto-unroll: unroll loop nests of this stage with at most {@code steps} iterations in all. */
        public StageRef autoUnrollMaxStep(String loop, int steps) {
            return pragma(loop, PragmaStep.AUTO_UNROLL + "$" + steps);
        }

        public StageRef storageAlign(int dim, int factor, int offset) {
            apply(new StorageAlignStep(id(), dim, factor, offset));
            return this;
        }

        @Override
        public String toString() { return name; }
    }
}
