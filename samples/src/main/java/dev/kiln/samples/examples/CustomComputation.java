package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.f32;
import static dev.kiln.te.Te.maximum;
import static dev.kiln.te.Te.names;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.Kiln;
import dev.kiln.ir.IterVar;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;

/** A computation that is not in the operator library: a dense layer with bias and ReLU, axes named. */
public final class CustomComputation {
    private CustomComputation() {}

    /** {@code ./kiln sample custom [rows]}: a [rows, 32] x [16, 32]^T dense layer (default 64 rows). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 64));
    }

    public static void run(int rows) {
        // readme:begin
        Tensor X = placeholder("X", FLOAT32, rows, 32);
        Tensor W = placeholder("W", FLOAT32, 16, 32);
        Tensor bias = placeholder("bias", FLOAT32, 16);
        IterVar ci = reduceAxis(32, "ci");
        Tensor Y = compute(
                "Y",
                shape(rows, 16),
                names("row", "co"),
                (row, co) -> sum(ci, X.at(row, ci).mul(W.at(co, ci))));
        Tensor Z = compute(
                "Z",
                shape(rows, 16),
                names("row", "co"),
                (row, co) -> maximum(Y.at(row, co).add(bias.at(co)), f32(0)));
        ComputeDAG dag = ComputeDAG.of(Z);
        System.out.println(dag); // Y[row, co] = sum(X[row, ci] * W[co, ci]) ...; the loops keep these names

        try (CompiledKernel kernel = Kiln.compile(dag, Target.CPU);
                NDArray x = NDArray.random(FLOAT32, 1, rows, 32);
                NDArray w = NDArray.random(FLOAT32, 2, 16, 32);
                NDArray b = NDArray.random(FLOAT32, 3, 16);
                NDArray z = NDArray.allocate(FLOAT32, rows, 16)) {
            kernel.call(x, w, b, z); // inputs in the order dag.inputs() lists them, then the output
            for (int row = 0; row < rows; row++) { // plain Java, for comparison
                for (int co = 0; co < 16; co++) {
                    double s = b.getDouble(co);
                    for (int c = 0; c < 32; c++) s += x.getDouble(row, c) * w.getDouble(co, c);
                    double want = Math.max(s, 0);
                    if (Math.abs(z.getDouble(row, co) - want) > 1e-4 * (1 + Math.abs(want))) {
                        throw new AssertionError(
                                "Z[" + row + ", " + co + "] = " + z.getDouble(row, co) + ", want " + want);
                    }
                }
            }
            System.out.println("Z matches plain Java loops");
        }
        // readme:end
    }
}
