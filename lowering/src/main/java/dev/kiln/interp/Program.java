package dev.kiln.interp;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

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
    private final boolean[] written;

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
        this.written = written(function);
    }

    /** Which parameters the function stores to. */
    private static boolean[] written(PrimFunc f) {
        Map<Buffer, Integer> index = new IdentityHashMap<>();
        List<Buffer> ps = f.params();
        for (int i = 0; i < ps.size(); i++) index.put(ps.get(i).base(), i);
        boolean[] w = new boolean[ps.size()];
        Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof Store st) {
                Integer i = index.get(st.buffer().base());
                if (i != null) w[i] = true;
            }
        });
        return w;
    }

    /** The function this program runs. */
    public PrimFunc function() {
        return function;
    }

    /** The compiled body (for the interpreter's own tests, which check which nodes a statement became). */
    ExecNode root() {
        return body;
    }

    /**
     * Runs the function on {@code args} (one per parameter, inputs then outputs). Every argument is
     * checked first: count, dtype, shape and strides must match the parameter buffers, or a
     * {@link KilnException} names the function, the parameter, and what was expected and given.
     * An array the function writes must not share memory with any other argument (the same array
     * passed as input and output, or two views of one): the interpreter reads inputs while it
     * writes outputs, so the result would depend on the order of the loops; such a call is rejected
     * naming both arguments.
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
        for (int i = 0; i < args.length; i++) {
            if (!written[i] || args[i].numElements() == 0) continue;
            for (int j = 0; j < args.length; j++) {
                if (j == i || args[j].numElements() == 0 || !overlap(args[i].segment(), args[j].segment())) continue;
                throw new KilnException("function '" + function.name() + "': parameter " + i + " '"
                        + params.get(i).name() + "' (written) and parameter " + j + " '"
                        + params.get(j).name()
                        + "' share memory" + (args[i] == args[j] ? " (the same array was passed for both)" : "")
                        + "; the interpreter needs every array it writes to be separate from the other arguments");
            }
        }
    }

    /** Whether two segments share bytes: both native, or both on the same heap array. */
    private static boolean overlap(MemorySegment a, MemorySegment b) {
        if (a.isNative() != b.isNative()) return false;
        if (!a.isNative() && a.heapBase().orElse(null) != b.heapBase().orElse(null)) return false;
        long x = a.address(), y = b.address();
        return x < y + b.byteSize() && y < x + a.byteSize();
    }

    private String describe(Buffer p, int i) {
        return p.dtype() + Arrays.toString(shapes.get(i)) + " with strides " + Arrays.toString(strides.get(i));
    }

    @Override
    public String toString() {
        return "Program(" + function.name() + ")";
    }
}
