package dev.kiln.interp;

import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;

/**
 * Not a unit test: a small program that times the interpreter on a matmul lowered by
 * LowerDefault. Run with {@code java -cp ... dev.kiln.interp.InterpreterSpeed [n] [repeats]}.
 */
public final class InterpreterSpeed {
    private InterpreterSpeed() {}

    public static void main(String[] argv) {
        int n = argv.length > 0 ? Integer.parseInt(argv[0]) : 512;
        int repeats = argv.length > 1 ? Integer.parseInt(argv[1]) : 3;
        Tensor a = placeholder("A", DType.FLOAT32, n, n);
        Tensor b = placeholder("B", DType.FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor c = compute("C", shape(n, n), (i, j) -> sum(k, a.at(i, k).mul(b.at(k, j))));
        PrimFunc f = LowerDefault.lower("matmul", List.of(a, b, c));
        try (NDArray x = NDArray.random(DType.FLOAT32, 1, n, n);
                NDArray y = NDArray.random(DType.FLOAT32, 2, n, n);
                NDArray z = NDArray.allocate(DType.FLOAT32, n, n)) {
            Program p = Interpreter.compile(f);
            for (int r = 0; r < repeats; r++) {
                java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
                long c0 = mx.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                p.run(x, y, z);
                double s = (System.nanoTime() - t0) / 1e9;
                double cpu = (mx.getCurrentThreadCpuTime() - c0) / 1e9;
                System.out.printf(
                        "matmul %d^3 run %d: %.2f s wall, %.2f s cpu (%.1f ns cpu per multiply-add)%n",
                        n, r, s, cpu, cpu * 1e9 / ((double) n * n * n));
            }
        }
    }
}
