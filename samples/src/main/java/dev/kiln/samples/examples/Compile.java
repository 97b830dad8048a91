package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.Kiln;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.Tensor;

/** The README's first example: describe a matmul, compile it untuned for this CPU, call it. */
public final class Compile {
    private Compile() {}

    /** {@code ./kiln sample compile [n]}: an n x n matmul (default 512). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 512));
    }

    public static void run(int n) {
        // readme:begin
        Tensor A = placeholder("A", FLOAT32, n, n);
        Tensor B = placeholder("B", FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor C = compute("C", shape(n, n), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));

        try (CompiledKernel kernel = Kiln.compile(C, Target.CPU); // untuned: the loops as written, through LLVM
                NDArray a = NDArray.random(FLOAT32, 1, n, n);
                NDArray b = NDArray.random(FLOAT32, 2, n, n);
                NDArray c = NDArray.allocate(FLOAT32, n, n);
                NDArray expected = NDArray.allocate(FLOAT32, n, n)) {
            kernel.call(a, b, c); // the inputs, then the outputs; one Panama downcall
            Interpreter.run(kernel.func(), a, b, expected); // the reference interpreter, same program
            c.assertClose(expected, 1e-4, 1e-4);
            System.out.println("C[0][0] = " + c.getDouble(0, 0) + ", matches the interpreter");
        }
        // readme:end
    }
}
