package dev.kiln.lower;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.ir.IterVar;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;

/** Small computations and schedules the pass tests share. */
final class Dags {
    private Dags() {}

    /** C = A x B, D = relu(C). */
    static ComputeDAG matmulRelu(int m, int n, int k) {
        Tensor A = placeholder("A", FLOAT32, m, k);
        Tensor B = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "k");
        Tensor C = compute("C", shape(m, n), (i, j) -> sum(r, A.at(i, r).mul(B.at(r, j))));
        Tensor D = compute("D", shape(m, n), (i, j) -> C.at(i, j).max(0.0));
        return ComputeDAG.of(D);
    }

    /** B = A * 2 + 1 over a vector. */
    static ComputeDAG scale(int n) {
        Tensor A = placeholder("A", FLOAT32, n);
        return ComputeDAG.of(compute("B", shape(n), i -> A.at(i).mul(2.0).add(1.0)));
    }

    /** B = A * 2 over a matrix. */
    static ComputeDAG scale2d(int m, int n) {
        Tensor A = placeholder("A", FLOAT32, m, n);
        return ComputeDAG.of(compute("B", shape(m, n), (i, j) -> A.at(i, j).mul(2.0)));
    }

    /**
     * The tiled matmul + relu schedule of ScheduleDataTest: cache write, compute_at, a fused
     * parallel loop, a vectorized inner loop and auto-unroll; splits that do not divide when the
     * sizes are odd.
     */
    static Schedule tiledMatmulRelu(ComputeDAG dag) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var C = s.stage("C");
        var local = C.cacheWrite("local");
        C.computeInline();
        var D = s.stage("D");
        D.split("i", 4, 2);
        D.split("j", 8);
        D.reorder("i.0", "j.0", "i.1", "i.2", "j.1");
        local.computeAt(D, "j.0");
        local.split("k", 4);
        D.parallel(D.fuse("i.0", "j.0"));
        D.vectorize("j.1");
        local.autoUnrollMaxStep("i", 16);
        return s.build();
    }
}
