package dev.kiln.jit.jvm;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.Buffer;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;

/**
 * Differential testing of the JVM backend against the reference interpreter: the same function
 * runs on identical copies of seeded random arguments (every parameter, outputs included, so
 * elements a kernel must not touch are compared too), then every parameter is compared.
 */
final class JvmCheck {
    private JvmCheck() {}

    static final CpuTarget TARGET = JvmTarget.jvm(2);
    static final JvmBackend BACKEND = new JvmBackend();

    static List<NDArray> randomArgs(PrimFunc f, long seed) {
        List<NDArray> out = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            out.add(NDArray.allocate(f.params().get(i)).fillRandom(seed * 1000 + i));
        }
        return out;
    }

    static List<NDArray> copies(List<NDArray> args) {
        List<NDArray> out = new ArrayList<>();
        for (NDArray a : args) {
            NDArray c = NDArray.allocateStrided(a.dtype(), a.shape(), a.strides());
            c.copyFrom(a);
            out.add(c);
        }
        return out;
    }

    /** Runs {@code f} through the JVM backend and the interpreter on random arguments; compares every parameter. */
    static JvmKernel matches(PrimFunc f, long seed, double rtol, double atol) {
        List<NDArray> args = randomArgs(f, seed);
        try {
            return matches(f, args, rtol, atol);
        } finally {
            for (NDArray a : args) a.close();
        }
    }

    static JvmKernel matches(PrimFunc f, List<NDArray> args, double rtol, double atol) {
        return matches(f, TARGET, args, rtol, atol);
    }

    /** {@link #matches(PrimFunc, List, double, double)} compiled for {@code target}. */
    static JvmKernel matches(PrimFunc f, CpuTarget target, List<NDArray> args, double rtol, double atol) {
        List<NDArray> expected = copies(args);
        List<NDArray> actual = copies(args);
        try {
            JvmKernel k = BACKEND.compile(f, target);
            Interpreter.run(f, expected.toArray(NDArray[]::new));
            k.call(actual.toArray(NDArray[]::new));
            for (int i = 0; i < args.size(); i++) {
                NDArray a = actual.get(i), e = expected.get(i);
                var c = a.compareTo(e, rtol, atol);
                if (!c.ok()) {
                    throw new AssertionError("function '" + f.name() + "' parameter '"
                            + f.params().get(i).name() + "' (" + a.dtype() + "): " + c.report() + "\n" + f + "\nnotes: "
                            + k.notes());
                }
            }
            return k;
        } finally {
            for (NDArray a : expected) a.close();
            for (NDArray a : actual) a.close();
        }
    }

    /** Bitwise equality of every parameter (NaNs of any payload count as equal). */
    static JvmKernel exact(PrimFunc f, long seed) {
        return matches(f, seed, 0, 0);
    }

    static Buffer param(PrimFunc f, int i) {
        return f.params().get(i);
    }
}
