package dev.kiln.lower;

import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The lowering pipeline, defined in one place: the schedule becomes loops (inline, bound
 * inference and loop nests, in {@link ScheduleLowering}), then the phases of
 * {@link #pipeline(Target)} rewrite the program, one pass after another, run by
 * {@link Pipeline#run}. {@link Options} can dump the program after every pass (marking the passes
 * that changed nothing, with the time each took) and verify it ({@link VerifyWellFormed}).
 */
public final class Lowering {
    private Lowering() {}

    /**
     * A named pass, and the well-formedness rules that hold from it on (checked after it and
     * every later pass when verifying).
     */
    public record Pass(String name, UnaryOperator<PrimFunc> run, Set<VerifyWellFormed.Rule> establishes) {
        public Pass {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(run, "run");
            establishes = Set.copyOf(establishes);
        }

        public Pass(String name, UnaryOperator<PrimFunc> run) {
            this(name, run, Set.of());
        }
    }

    /** A named group of passes that serve one purpose, run in order. */
    public record Phase(String name, List<Pass> passes) {
        public Phase {
            Objects.requireNonNull(name, "name");
            passes = List.copyOf(passes);
        }
    }

    /**
     * One pass's run, as a listener sees it: the phase and the pass, the program after it,
     * whether the pass changed it (structurally) and how long it took.
     */
    public record PassRun(String phase, String pass, PrimFunc func, boolean changed, long nanos) {
        /** The dump's header line: {@code // after simplify (canonicalize, 0.412 ms)}, {@code unchanged} when so. */
        public String header() {
            return String.format(
                    Locale.ROOT, "// after %s (%s, %.3f ms)%s", pass, phase, nanos / 1e6, changed ? "" : ": unchanged");
        }
    }

    /**
     * Options of a lowering run.
     *
     * @param dump     called with (pass name, program) after every pass, or null
     * @param listener called with every {@link PassRun}, or null
     * @param verify   whether to check the program with {@link VerifyWellFormed} after every pass;
     *                 on by default when the system property {@code kiln.lowering.verify} is true,
     *                 as it is in the tests
     */
    public record Options(BiConsumer<String, PrimFunc> dump, Consumer<PassRun> listener, boolean verify) {
        /** A dump listener; verification as by default. */
        public Options(BiConsumer<String, PrimFunc> dump) {
            this(dump, null, verifyByDefault());
        }

        public static Options defaults() {
            return new Options(null, null, verifyByDefault());
        }

        /**
         * Prints the program after every pass to standard error, with the pass's phase and time; unchanged ones are
         * marked, not printed.
         */
        public static Options dumpToStderr() {
            return new Options(
                    null,
                    run -> System.err.println(run.header() + (run.changed() ? "\n" + run.func() : "")),
                    verifyByDefault());
        }

        public Options withVerify(boolean on) {
            return new Options(dump, listener, on);
        }

        public Options withListener(Consumer<PassRun> l) {
            return new Options(dump, l, verify);
        }

        static boolean verifyByDefault() {
            return Boolean.getBoolean("kiln.lowering.verify");
        }
    }

    /**
     * The pipeline for any target: the passes every program goes through, without the GPU passes
     * and without a thread-binding rule (what {@link #lower(String, Schedule)} runs; the interpreter runs
     * its result whatever the bindings).
     */
    public static Pipeline pipeline() {
        return new Pipeline(null, null, phases(null, false));
    }

    /**
     * The pipeline for a target. Its phases, in order:
     * <ol>
     *   <li>{@code canonicalize}: simplify (fold the index arithmetic of the schedule and drop the
     *       guards that always hold, so that only the real guards are left);</li>
     *   <li>{@code gpu} (GPU targets): verify-thread-bindings, plan-memory-scopes, inject-barriers
     *       (see {@link GpuPasses}), while buffers still have their n-d shapes and before loop
     *       partitioning, unrolling and flattening multiply the code, so a bad schedule fails fast;</li>
     *   <li>{@code loops}: partition-loops (guard-free main parts, so that the loops vectorize and
     *       unroll see are guard-free), simplify (unwrap the one-iteration tails, drop the guards now
     *       known false), on CPU targets with fast math skip-padded-terms ({@link SkipPaddedTerms}: reduction
     *       terms that read zero padding are skipped behind guards), legalize-vectorize (before unrolling, so
     *       that a vectorized loop it demotes to unrolled is then really unrolled), unroll-loops (explicit unroll and
     *       auto_unroll_max_step);</li>
     *   <li>{@code flatten}: flatten-buffers, last of the structural passes, which reason on n-d indices;</li>
     *   <li>{@code cleanup}: simplify (fold the flattened offsets and the constants unrolling
     *       substituted), remove-no-ops (what the passes emptied);</li>
     *   <li>{@code gpu-check} (GPU targets): verify-gpu-program, the thread-binding check again,
     *       which makes sure the later passes kept every barrier where all threads of its block reach it.</li>
     * </ol>
     */
    public static Pipeline pipeline(Target target) {
        return switch (target) {
            case CpuTarget c -> new Pipeline(Target.Kind.CPU, null, phases(null, c.fastMath()));
            case CudaTarget c -> gpuPipeline(GpuLimits.of(c));
        };
    }

    /** The pipeline of a GPU with the given limits. */
    public static Pipeline gpuPipeline(GpuLimits limits) {
        return new Pipeline(Target.Kind.CUDA, limits, phases(limits, false));
    }

    private static List<Phase> phases(GpuLimits gpu, boolean fastMath) {
        Pass simplify = new Pass("simplify", Simplify::apply);
        List<Phase> out = new ArrayList<>();
        out.add(new Phase("canonicalize", List.of(simplify)));
        if (gpu != null) out.add(new Phase("gpu", GpuPasses.passes(gpu)));
        List<Pass> loops = new ArrayList<>(List.of(
                new Pass("unswitch-guards", UnswitchGuards::apply),
                new Pass("partition-loops", PartitionLoops::apply),
                simplify));
        if (fastMath) loops.add(new Pass("skip-padded-terms", SkipPaddedTerms::apply));
        loops.add(new Pass("legalize-vectorize", LegalizeVectorize::apply, Set.of(VerifyWellFormed.Rule.VECTOR_LANES)));
        loops.add(new Pass("unroll-loops", UnrollLoops::apply));
        out.add(new Phase("loops", loops));
        out.add(new Phase("flatten", List.of(new Pass("flatten-buffers", FlattenBuffers::apply))));
        out.add(new Phase("cleanup", List.of(simplify, new Pass("remove-no-ops", RemoveNoOps::apply))));
        if (gpu != null) {
            out.add(new Phase(
                    "gpu-check", List.of(new Pass("verify-gpu-program", f -> VerifyThreadBindings.apply(f, gpu)))));
        }
        return List.copyOf(out);
    }

    /** The passes of {@link #pipeline()}, in order. */
    public static List<Pass> passes() {
        return pipeline().passes();
    }

    /**
     * Lowers a schedule through {@link #pipeline()} with the default options; the function's
     * parameters are the DAG's inputs, then its outputs.
     */
    public static PrimFunc lower(String name, Schedule schedule) {
        if (name == null || name.isEmpty())
            throw new ScheduleException("lower: the function name is " + (name == null ? "null" : "empty"));
        return lower(name, schedule, Options.defaults());
    }

    /** Lowers a schedule through {@link #pipeline()}. */
    public static PrimFunc lower(String name, Schedule schedule, Options options) {
        return pipeline().lower(name, schedule, options);
    }

    /** Lowers a schedule through {@link #pipeline(Target)}. */
    public static PrimFunc lower(String name, Schedule schedule, Target target, Options options) {
        return pipeline(target).lower(name, schedule, options);
    }
}
