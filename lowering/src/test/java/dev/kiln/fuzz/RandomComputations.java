package dev.kiln.fuzz;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Random computations for differential testing: chains of elementwise ops, reductions,
 * matmul-like contractions, transposes, stencils and padding over small odd shapes. Every value
 * stays in a modest range (tanh, max/min, small coefficients) so float32 comparisons stay tight.
 */
public final class RandomComputations {
    private final SplittableRandom rng;
    private int counter;

    private RandomComputations(SplittableRandom rng) {
        this.rng = rng;
    }

    /** A random DAG: an operator of the library (a third of the time) or a chain of 1 to 4 random stages. */
    public static ComputeDAG generate(SplittableRandom rng) {
        if (rng.nextInt(3) == 0) return RandomOperators.generate(rng);
        return new RandomComputations(rng).dag();
    }

    private ComputeDAG dag() {
        int rank = 1 + rng.nextInt(3);
        long[] dims = new long[rank];
        for (int d = 0; d < rank; d++) dims[d] = 1 + rng.nextInt(rank == 1 ? 24 : rank == 2 ? 12 : 7);
        Tensor x = Te.placeholder("X", FLOAT32, dims);
        List<Tensor> pool = new ArrayList<>(List.of(x));
        if (rng.nextBoolean()) pool.add(Te.placeholder("Y", FLOAT32, dims));
        int stages = 1 + rng.nextInt(4);
        Tensor last = x;
        for (int s = 0; s < stages; s++) {
            last = stage(pool, last);
            pool.add(last);
        }
        return ComputeDAG.of(last);
    }

    private String name() {
        return "T" + counter++;
    }

    private Tensor stage(List<Tensor> pool, Tensor prev) {
        int kind = rng.nextInt(7);
        return switch (kind) {
            case 0, 1 -> elementwise(pool, prev);
            case 2 -> reduction(prev);
            case 3 -> prev.rank() == 2 ? contraction(prev) : elementwise(pool, prev);
            case 4 -> transpose(prev);
            case 5 -> stencil(prev);
            default -> pad(prev);
        };
    }

    private Tensor elementwise(List<Tensor> pool, Tensor prev) {
        Tensor other = pool.get(rng.nextInt(pool.size()));
        boolean sameShape = other.shape().equals(prev.shape());
        int op = rng.nextInt(6);
        double c = 0.25 + rng.nextInt(8) * 0.125;
        return Te.computeN(name(), prev.shape(), ax -> {
            Expr a = prev.at(ax);
            Expr b = sameShape ? other.at(ax) : Te.f32(c);
            return switch (op) {
                case 0 -> a.add(b);
                case 1 -> a.mul(b).sub(c);
                case 2 -> a.max(b);
                case 3 -> Te.tanh(a.mul(c)).add(b.min(0.5));
                case 4 -> Te.select(a.gt(b), a.mul(0.5), b.mul(c));
                default -> a.mul(a).mul(0.5).add(b);
            };
        });
    }

    private Tensor reduction(Tensor prev) {
        int rank = prev.rank();
        if (rank == 1) {
            IterVar k = Te.reduceAxis(prev.dim(0), "k");
            return Te.compute(
                    name(),
                    Te.shape(1),
                    i -> rng.nextBoolean() ? Te.sum(k, prev.at(k).mul(0.5)) : Te.max(k, prev.at(k)));
        }
        int axis = rng.nextInt(rank);
        long[] out = new long[rank - 1];
        for (int d = 0, o = 0; d < rank; d++) if (d != axis) out[o++] = prev.dim(d);
        IterVar k = Te.reduceAxis(prev.dim(axis), "k");
        boolean useMax = rng.nextInt(3) == 0;
        boolean cond = rng.nextInt(4) == 0;
        return Te.computeN(
                name(), new Shape(java.util.Arrays.stream(out).boxed().toList()), ax -> {
                    List<Expr> idx = new ArrayList<>();
                    for (int d = 0, o = 0; d < rank; d++) idx.add(d == axis ? k : ax.get(o++));
                    Expr v = prev.at(idx);
                    if (useMax) return Te.max(k, v);
                    return cond ? Te.sum(List.of(k), v, k.lt(Math.max(1, prev.dim(axis) - 1))) : Te.sum(k, v.mul(0.5));
                });
    }

    private Tensor contraction(Tensor prev) {
        long m = prev.dim(0), kk = prev.dim(1);
        long n = 1 + rng.nextInt(9);
        Tensor w = Te.placeholder("W" + counter, FLOAT32, kk, n);
        IterVar k = Te.reduceAxis(kk, "k");
        return Te.compute(
                name(), Te.shape(m, n), (i, j) -> Te.sum(k, prev.at(i, k).mul(w.at(k, j))));
    }

    private Tensor transpose(Tensor prev) {
        int rank = prev.rank();
        if (rank == 1)
            return Te.compute(
                    name(), prev.shape(), i -> prev.at(Te.i32(prev.dim(0) - 1).sub(i))
                            .mul(1.5));
        int a = rng.nextInt(rank), b = (a + 1 + rng.nextInt(rank - 1)) % rank;
        long[] dims = prev.shape().toArray();
        long t = dims[a];
        dims[a] = dims[b];
        dims[b] = t;
        return Te.computeN(name(), Shape.of(dims), ax -> {
            List<Expr> idx = new ArrayList<>(ax);
            idx.set(a, ax.get(b));
            idx.set(b, ax.get(a));
            return prev.at(idx).add(0.25);
        });
    }

    private Tensor stencil(Tensor prev) {
        int axis = rng.nextInt(prev.rank());
        long n = prev.dim(axis);
        return Te.computeN(name(), prev.shape(), ax -> {
            List<Expr> left = new ArrayList<>(ax), right = new ArrayList<>(ax);
            left.set(axis, ax.get(axis).sub(1).max(0));
            right.set(axis, ax.get(axis).add(1).min(n - 1));
            return prev.at(left).add(prev.at(ax).mul(2.0)).add(prev.at(right)).mul(0.25);
        });
    }

    private Tensor pad(Tensor prev) {
        int axis = rng.nextInt(prev.rank());
        long before = 1 + rng.nextInt(2), after = rng.nextInt(3);
        long[] dims = prev.shape().toArray();
        long n = dims[axis];
        dims[axis] = n + before + after;
        return Te.computeN(name(), Shape.of(dims), ax -> {
            List<Expr> idx = new ArrayList<>(ax);
            Expr i = ax.get(axis);
            idx.set(axis, i.sub(before).max(0).min(n - 1));
            return Te.select(i.ge(before).and(i.lt(before + n)), prev.at(idx), Te.f32(0));
        });
    }
}
