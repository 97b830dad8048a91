package dev.kiln.lower;

import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;

/**
 * The lowering pipeline, as one readable list: the schedule becomes loops (inline, bound
 * inference and loop nests, in {@link ScheduleLowering}), then each pass rewrites the program.
 * {@link Options#dump} sees the program after every pass.
 */
public final class Lowering {
    private Lowering() {}

    /** A named pass. */
    public record Pass(String name, UnaryOperator<PrimFunc> run) {}

    /** Options: a listener called with (pass name, program) after every pass, or null. */
    public record Options(BiConsumer<String, PrimFunc> dump) {
        public static Options defaults() { return new Options(null); }

        /** Prints the program after every pass to standard error. */
        public static Options dumpToStderr() {
            return new Options((pass, f) -> System.err.println("// after " + pass + "\n" + f));
        }
    }

    /**
     * The passes after the schedule has become loops, in order:
     * <ol>
     *   <li>simplify: fold the index arithmetic of the schedule and drop the guards that always
     *       hold, so that only the real guards (splits that do not divide) are left;</li>
     *   <li>partition-loops: split guarded loops into a guard-free main part and head/tail parts;
     *       first, so that the loops vectorize and unroll see are guard-free;</li>
     *   <li>simplify: unwrap the one-iteration tails and drop the guards now known false;</li>
     *   <li>legalize-vectorize: before unrolling, so that a vectorized loop it demotes to unrolled
     *       is then really unrolled, and so that unrolling sees the final loop kinds;</li>
     *   <li>unroll-loops: explicit unroll and auto_unroll_max_step (drops the pragma);</li>
     *   <li>flatten-buffers: last of the structural passes, which reason on n-d indices;</li>
     *   <li>simplify: fold the flattened offsets and the constants unrolling substituted;</li>
     *   <li>remove-no-ops: clean up what the passes emptied.</li>
     * </ol>
     */
    public static List<Pass> passes() {
        return List.of(
                new Pass("simplify", Simplify::apply),
                new Pass("partition-loops", PartitionLoops::apply),
                new Pass("simplify", Simplify::apply),
                new Pass("legalize-vectorize", LegalizeVectorize::apply),
                new Pass("unroll-loops", UnrollLoops::apply),
                new Pass("flatten-buffers", FlattenBuffers::apply),
                new Pass("simplify", Simplify::apply),
                new Pass("remove-no-ops", RemoveNoOps::apply));
    }

    public static PrimFunc lower(String name, Schedule schedule, Options options) {
        LoopState state = schedule.replay();
        PrimFunc f = ScheduleLowering.lower(name, state);
        if (options.dump() != null) options.dump().accept("schedule-to-loops", f);
        for (Pass p : passes()) {
            f = p.run().apply(f);
            if (options.dump() != null) options.dump().accept(p.name(), f);
        }
        return f;
    }
}
