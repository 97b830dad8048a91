package dev.kiln.schedule;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.ir.IterVar;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;

/** Small computations the schedule tests share. */
final class Workloads {
    private Workloads() {}

    /** C = A x B, D = relu(C): a matmul with an elementwise consumer. */
    static ComputeDAG matmulRelu(int m, int n, int k) {
        Tensor A = placeholder("A", FLOAT32, m, k);
        Tensor B = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "k");
        Tensor C = compute("C", shape(m, n), (i, j) -> sum(r, A.at(i, r).mul(B.at(r, j))));
        Tensor D = compute("D", shape(m, n), (i, j) -> C.at(i, j).max(0.0));
        return ComputeDAG.of(D);
    }

    static ComputeDAG matmul(int m, int n, int k) {
        Tensor A = placeholder("A", FLOAT32, m, k);
        Tensor B = placeholder("B", FLOAT32, k, n);
        IterVar r = reduceAxis(k, "k");
        return ComputeDAG.of(
                compute("C", shape(m, n), (i, j) -> sum(r, A.at(i, r).mul(B.at(r, j)))));
    }

    /** B = A + 1 (padded by select), C = 3x1 stencil over B: compute_at with overlapping regions. */
    static ComputeDAG stencil(int n) {
        Tensor A = placeholder("A", FLOAT32, n);
        Tensor B = compute(
                "B",
                shape(n + 2),
                i -> dev.kiln.te.Te.select(
                        i.ge(1).and(i.lt(n + 1)),
                        A.at(i.sub(1).max(0).min(n - 1)).mul(2.0),
                        dev.kiln.te.Te.f32(0)));
        Tensor C = compute("C", shape(n), i -> B.at(i).add(B.at(i.add(1))).add(B.at(i.add(2))));
        return ComputeDAG.of(C);
    }
}
