package dev.kiln.lower;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;

/** What the pass tests share: running a program before and after a pass on the same random arguments. */
final class PassChecks {
    private PassChecks() {}

    /**
     * Runs {@code before} and {@code after} through the interpreter, each on its own copy of the
     * same seeded random arguments (inputs and outputs alike, so an element one program writes and
     * the other does not shows up), and requires every argument to end bit-identical (tolerance
     * 0: the passes keep the order of every operation). Also requires that the program wrote
     * something, so the comparison is not vacuous.
     */
    static void assertSameResults(PrimFunc before, PrimFunc after, long seed) {
        assertThat(after.params()).isEqualTo(before.params());
        List<NDArray> a = arguments(before, seed), b = arguments(after, seed), initial = arguments(before, seed);
        Interpreter.run(before, a.toArray(NDArray[]::new));
        Interpreter.run(after, b.toArray(NDArray[]::new));
        boolean changed = false;
        for (int i = 0; i < a.size(); i++) {
            b.get(i).assertClose(a.get(i), 0, 0);
            changed |= !a.get(i).compareTo(initial.get(i), 0, 0).ok();
        }
        assertThat(changed).as("the program wrote none of its arguments").isTrue();
    }

    /** {@link #assertSameResults} for several seeds. */
    static void assertSameResults(PrimFunc before, PrimFunc after) {
        for (long seed = 1; seed <= 3; seed++) assertSameResults(before, after, seed);
    }

    /** Fresh seeded random arrays for the parameters of {@code f} (with their strides). */
    static List<NDArray> arguments(PrimFunc f, long seed) {
        List<NDArray> out = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++)
            out.add(NDArray.allocate(f.params().get(i)).fillRandom(seed * 31 + i));
        return out;
    }

    /** The schedule as loops, before any pass. */
    static PrimFunc loops(Schedule s) {
        return ScheduleLowering.lower("f", s.replay());
    }

    /** Every pass of {@link Lowering#passes()} applied to {@code f}, in order. */
    static PrimFunc pipeline(PrimFunc f) {
        for (Lowering.Pass p : Lowering.passes()) f = p.run().apply(f);
        return f;
    }

    /** The schedule as loops, simplified once (what the passes after the first simplify see). */
    static PrimFunc simplified(Schedule s) {
        return Simplify.apply(loops(s));
    }

    static Buffer buffer(String name, long... shape) {
        List<Long> sh = new ArrayList<>();
        for (long x : shape) sh.add(x);
        return Buffer.rowMajor(name, DType.FLOAT32, sh, MemoryScope.GLOBAL);
    }

    static Expr i32(long v) {
        return IntImm.i32(v);
    }
}
