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

    /** The passes after the schedule has become loops, in order. */
    public static List<Pass> passes() {
        return List.of(new Pass("simplify", Simplify::apply));
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
