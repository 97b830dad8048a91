package dev.kiln.jit;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;

/**
 * Differential testing of the LLVM backend against the reference interpreter: the same function
 * runs on identical copies of seeded random arguments (every parameter, outputs included, so
 * "untouched" elements are compared too), then every parameter is compared.
 */
final class JitCheck {
    private JitCheck() {}

    static final CpuTarget TARGET = Target.cpu();
    static final LlvmBackend BACKEND = new LlvmBackend();

    /** Random arguments for every parameter of {@code f}. */
    static List<NDArray> randomArgs(PrimFunc f, long seed) {
        List<NDArray> out = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            Buffer b = f.params().get(i);
            out.add(NDArray.allocate(b).fillRandom(seed * 1000 + i));
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

    /** Runs {@code f} through the JIT and the interpreter on random arguments; compares every parameter. */
    static void matches(PrimFunc f, long seed, double rtol, double atol) {
        matches(f, randomArgs(f, seed), rtol, atol, JitOptions.defaults());
    }

    static void matches(PrimFunc f, List<NDArray> args, double rtol, double atol, JitOptions options) {
        List<NDArray> expected = copies(args);
        List<NDArray> actual = copies(args);
        try (LlvmKernel k = BACKEND.compile(f, TARGET, options)) {
            Interpreter.run(f, expected.toArray(NDArray[]::new));
            k.call(actual.toArray(NDArray[]::new));
            for (int i = 0; i < args.size(); i++) {
                NDArray a = actual.get(i), e = expected.get(i);
                var c = a.compareTo(e, rtol, atol);
                if (!c.ok()) {
                    throw new AssertionError("function '" + f.name() + "' parameter '"
                            + f.params().get(i).name() + "' (" + a.dtype() + "): " + c.report() + "\n" + f + "\n"
                            + k.generatedIr());
                }
            }
        } finally {
            for (NDArray a : args) a.close();
            for (NDArray a : expected) a.close();
            for (NDArray a : actual) a.close();
        }
    }

    /** Bitwise equality of every parameter (NaNs of any payload count as equal). */
    static void exact(PrimFunc f, long seed) {
        matches(f, seed, 0, 0);
    }

    /** One unit in the last place of {@code t} at magnitude 1, a natural tolerance scale. */
    static double ulp(DType t) {
        return switch (t) {
            case FLOAT16 -> 0x1p-10;
            case BFLOAT16 -> 0x1p-7;
            case FLOAT32 -> 0x1p-23;
            case FLOAT64 -> 0x1p-52;
            default -> 0;
        };
    }
}
