package dev.kiln.interp;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.List;

/**
 * A {@link PrimFunc} compiled for the {@link Interpreter}: reusable, and safe to run from several
 * threads at once (each run has its own frame and scratch memory; the arrays passed to concurrent
 * runs must of course not overlap where they are written).
 */
public final class Program {
    private final PrimFunc function;
    private final ExecNode body;
    private final int ints;
    private final int floats;
    private final int bufs;
    private final int scratch;
    private final List<long[]> shapes;
    private final List<long[]> strides;

    Program(
            PrimFunc function,
            ExecNode body,
            int ints,
            int floats,
            int bufs,
            int scratch,
            List<long[]> shapes,
            List<long[]> strides) {
        this.function = function;
        this.body = body;
        this.ints = ints;
        this.floats = floats;
        this.bufs = bufs;
        this.scratch = scratch;
        this.shapes = List.copyOf(shapes);
        this.strides = List.copyOf(strides);
    }

    /** The function this program runs. */
    public PrimFunc function() {
        return function;
    }

    /**
     * Runs the function on {@code args} (one per parameter, inputs then outputs). Every argument is
     * checked first: count, dtype, shape and strides must match the parameter buffers, or a
     * {@link KilnException} names the function, the parameter, and what was expected and given.
     */
    public void run(NDArray... args) {
        checkArguments(args);
        Arena arena = scratch > 0 ? Arena.ofConfined() : null;
        try {
            Frame f = new Frame(ints, floats, bufs, scratch, arena);
            for (int i = 0; i < args.length; i++) f.bufs[i] = args[i].segment();
            body.run(f);
        } finally {
            if (arena != null) arena.close();
        }
    }

    private void checkArguments(NDArray[] args) {
        List<Buffer> params = function.params();
        if (args == null || args.length != params.size()) {
            throw new KilnException("function '" + function.name() + "' takes " + params.size() + " argument(s) "
                    + params.stream().map(Buffer::name).toList() + " but got " + (args == null ? 0 : args.length));
        }
        for (int i = 0; i < args.length; i++) {
            Buffer p = params.get(i);
            NDArray a = args[i];
            String where = "function '" + function.name() + "', parameter " + i + " '" + p.name() + "': ";
            if (a == null) throw new KilnException(where + "expected " + describe(p, i) + " but got null");
            if (a.dtype() != p.dtype()) {
                throw new KilnException(
                        where + "expected dtype " + p.dtype() + " but got " + a.dtype() + " (" + a + ")");
            }
            if (!Arrays.equals(a.shape(), shapes.get(i))) {
                throw new KilnException(where + "expected shape " + Arrays.toString(shapes.get(i)) + " but got "
                        + Arrays.toString(a.shape()) + " (" + a + ")");
            }
            if (!Arrays.equals(a.strides(), strides.get(i))) {
                throw new KilnException(where + "expected strides " + Arrays.toString(strides.get(i)) + " but got "
                        + Arrays.toString(a.strides()) + " (" + a + ")");
            }
            if (!a.segment().scope().isAlive()) {
                throw new KilnException(where + "the array " + a + " has been closed");
            }
        }
    }

    private String describe(Buffer p, int i) {
        return p.dtype() + Arrays.toString(shapes.get(i)) + " with strides " + Arrays.toString(strides.get(i));
    }

    @Override
    public String toString() {
        return "Program(" + function.name() + ")";
    }
}
