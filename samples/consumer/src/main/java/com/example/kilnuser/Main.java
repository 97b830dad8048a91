package com.example.kilnuser;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.Kiln;
import dev.kiln.ir.IterVar;
import dev.kiln.nn.Activation;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.Tensor;

/**
 * A user's program: relu(A x B) written with Kiln's DSL and operator library, compiled for this CPU
 * by the LLVM JIT ({@code Kiln.compile}: the default program, no tuning), run on seeded random
 * inputs, and checked against plain Java loops. Exits with status 1 when an element is off by more
 * than the tolerance.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        int m = 48, n = 40, kk = 36;
        Tensor a = placeholder("A", FLOAT32, m, kk);
        Tensor b = placeholder("B", FLOAT32, kk, n);
        IterVar k = reduceAxis(kk, "k");
        Tensor c = compute("C", shape(m, n), (i, j) -> sum(k, a.at(i, k).mul(b.at(k, j))));
        Tensor out = Activation.relu(c);

        Target cpu = Target.CPU;
        try (CompiledKernel kernel = Kiln.compile(out, cpu);
                NDArray x = NDArray.random(FLOAT32, 1, m, kk);
                NDArray y = NDArray.random(FLOAT32, 2, kk, n);
                NDArray z = NDArray.allocate(FLOAT32, m, n)) {
            kernel.call(x, y, z);

            float[] xs = x.toFloatArray(), ys = y.toFloatArray(), zs = z.toFloatArray();
            double worst = 0;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    float acc = 0;
                    for (int p = 0; p < kk; p++) acc += xs[i * kk + p] * ys[p * n + j];
                    float expected = Math.max(acc, 0f);
                    worst = Math.max(worst, Math.abs(zs[i * n + j] - expected) / (1e-4 + Math.abs(expected)));
                }
            }
            System.out.printf("kiln-user: relu(A x B) %dx%dx%d on %s, worst relative error %.2e%n", m, n, kk, cpu, worst);
            if (!(worst <= 1e-4)) {
                System.err.println("kiln-user: the kernel's result differs from plain Java");
                System.exit(1);
            }
        }
    }
}
