package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.exp;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.shape;

import dev.kiln.Kiln;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.Tensor;

/** The pure-JVM backend: the same computation as bytecode, no native code. */
public final class JvmBackend {
    private JvmBackend() {}

    /** {@code ./kiln sample jvm [n]}: an elementwise x * exp(-x) over n elements (default 4096). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 4096));
    }

    public static void run(int n) {
        // readme:begin
        Tensor X = placeholder("X", FLOAT32, n);
        Tensor Y = compute("Y", shape(n), i -> X.at(i).mul(exp(X.at(i).neg())));

        try (CompiledKernel onJvm = Kiln.compile(Y, Target.JVM); // ASM bytecode, Vector API for vector loops
                CompiledKernel onLlvm = Kiln.compile(Y, Target.CPU);
                NDArray x = NDArray.random(FLOAT32, 1, n);
                NDArray y1 = NDArray.allocate(FLOAT32, n);
                NDArray y2 = NDArray.allocate(FLOAT32, n)) {
            onJvm.call(x, y1);
            onLlvm.call(x, y2);
            y1.assertClose(y2, 1e-5, 1e-6); // the two backends agree
            System.out.println(onJvm.source()); // what the JVM backend generated
        }
        // readme:end
    }
}
