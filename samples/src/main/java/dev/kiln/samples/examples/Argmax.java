package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.bool;
import static dev.kiln.te.Te.cast;
import static dev.kiln.te.Te.computeMulti;
import static dev.kiln.te.Te.names;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.select;
import static dev.kiln.te.Te.shape;

import dev.kiln.Kiln;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reducer;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.List;

/** A custom reducer: argmax over a row, as a (value, index) pair reduced together. */
public final class Argmax {
    private Argmax() {}

    /** {@code ./kiln sample argmax [rows] [columns]}: argmax of each row (default 8 x 100). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 8), Samples.intArg(args, 1, 100));
    }

    public static void run(int rows, int columns) {
        // readme:begin
        Tensor S = placeholder("S", FLOAT32, rows, columns); // rows of scores
        Reducer argmax = Reducer.of(
                "argmax",
                List.of(FLOAT32, INT32),
                (acc, x) -> {
                    Expr take = x.get(0)
                            .gt(acc.get(0)) // a larger value wins; on a tie, the smaller index
                            .or(x.get(0).eq(acc.get(0)).and(x.get(1).lt(acc.get(1))));
                    return List.of(select(take, x.get(0), acc.get(0)), select(take, x.get(1), acc.get(1)));
                },
                List.of(Reducer.lowest(FLOAT32), IntImm.i32(Integer.MAX_VALUE)));
        IterVar c = reduceAxis(columns, "c");
        List<Tensor> best = computeMulti(
                "best",
                shape(rows),
                names("row"),
                ax -> argmax.reduce(List.of(S.at(ax.get(0), c), cast(INT32, c)), List.of(c), bool(true)));
        ComputeDAG dag = ComputeDAG.of(best.get(0), best.get(1)); // best.v0 (float32), best.v1 (int32)
        System.out.println(dag.flopCount() + " " + dag.rateUnit()); // the 3 comparisons per point count

        try (CompiledKernel kernel = Kiln.compile(dag, Target.CPU);
                NDArray s = NDArray.random(FLOAT32, 7, rows, columns);
                NDArray value = NDArray.allocate(FLOAT32, rows);
                NDArray index = NDArray.allocate(INT32, rows)) {
            kernel.call(s, value, index);
            for (int r = 0; r < rows; r++) { // plain Java, for comparison
                int want = 0;
                for (int j = 1; j < columns; j++) if (s.getDouble(r, j) > s.getDouble(r, want)) want = j;
                if (index.getLong(r) != want || value.getDouble(r) != s.getDouble(r, want)) {
                    throw new AssertionError("row " + r + ": got " + index.getLong(r) + ", want " + want);
                }
            }
            System.out.println("argmax of row 0: column " + index.getLong(0) + " (" + value.getDouble(0) + ")");
        }
        // readme:end
    }
}
