package dev.kiln.lower;

import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A lowering pipeline: its phases of passes and what the programs it makes are for (a target
 * kind, or null for any; a GPU's limits), which the verifier checks thread bindings against.
 * {@link #run} is the one runner: each pass in order, then, as {@link Lowering.Options} ask, the
 * well-formedness check ({@link VerifyWellFormed}, naming the pass that broke a rule), the dump
 * and the listener (with whether the pass changed the program and its time, as Halide's
 * {@code Lower.cpp} logs).
 *
 * @param kind   the target kind, or null when the program may still run anywhere (the interpreter)
 * @param gpu    the GPU's limits when {@code kind} is CUDA, else null
 * @param phases the phases, in order
 */
public record Pipeline(Target.Kind kind, GpuLimits gpu, List<Lowering.Phase> phases) {
    /** The name under which the schedule's loops appear in dumps, before the first pass. */
    public static final String SCHEDULE_TO_LOOPS = "schedule-to-loops";

    public Pipeline {
        phases = List.copyOf(phases);
        if ((kind == Target.Kind.CUDA) != (gpu != null)) {
            throw new KilnException("a pipeline has GPU limits exactly when it is for a CUDA target");
        }
    }

    /** Every pass, in order. */
    public List<Lowering.Pass> passes() {
        return phases.stream().flatMap(p -> p.passes().stream()).toList();
    }

    /** The same pipeline with a phase's passes replaced (for tests of the runner). */
    public Pipeline withPhase(Lowering.Phase phase) {
        return new Pipeline(
                kind,
                gpu,
                phases.stream()
                        .map(p -> p.name().equals(phase.name()) ? phase : p)
                        .toList());
    }

    /** Replays the schedule, makes its loops ({@link ScheduleLowering}) and runs the passes. */
    public PrimFunc lower(String name, Schedule schedule, Lowering.Options options) {
        VerifyWellFormed.Context ctx = initial();
        PrimFunc f = step(
                options,
                ctx,
                "schedule",
                SCHEDULE_TO_LOOPS,
                null,
                () -> ScheduleLowering.lower(name, schedule.replay()));
        return passes(f, options, ctx);
    }

    /** Runs the passes on a program (checked first when verifying). */
    public PrimFunc run(PrimFunc f, Lowering.Options options) {
        VerifyWellFormed.Context ctx = initial();
        if (options.verify()) verify(f, ctx, "input", "the input program");
        return passes(f, options, ctx);
    }

    private PrimFunc passes(PrimFunc f, Lowering.Options options, VerifyWellFormed.Context ctx) {
        for (Lowering.Phase phase : phases) {
            for (Lowering.Pass p : phase.passes()) {
                PrimFunc in = f;
                ctx = ctx.with(p.establishes());
                f = step(options, ctx, phase.name(), p.name(), in, () -> p.run().apply(in));
            }
        }
        return f;
    }

    private VerifyWellFormed.Context initial() {
        Set<VerifyWellFormed.Rule> rules = EnumSet.copyOf(VerifyWellFormed.Rule.always());
        if (kind == Target.Kind.CPU) rules.add(VerifyWellFormed.Rule.THREAD_BINDINGS);
        return new VerifyWellFormed.Context(kind, gpu, rules);
    }

    private static PrimFunc step(
            Lowering.Options options,
            VerifyWellFormed.Context ctx,
            String phase,
            String pass,
            PrimFunc in,
            Supplier<PrimFunc> run) {
        long t0 = System.nanoTime();
        PrimFunc out = run.get();
        long nanos = System.nanoTime() - t0;
        if (options.verify()) verify(out, ctx, phase, "pass '" + pass + "'");
        if (options.dump() != null) options.dump().accept(pass, out);
        if (options.listener() != null) {
            boolean changed = in == null || (out != in && !out.equals(in));
            options.listener().accept(new Lowering.PassRun(phase, pass, out, changed, nanos));
        }
        return out;
    }

    private static void verify(PrimFunc f, VerifyWellFormed.Context ctx, String phase, String what) {
        try {
            VerifyWellFormed.check(f, ctx);
        } catch (KilnException e) {
            throw new KilnException(
                    "function '" + f.name() + "': " + what + " (phase " + phase + ") made an ill-formed" + " program: "
                            + e.getMessage(),
                    e);
        }
    }
}
