package dev.kiln.jit.jvm;

import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.shape;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;

/**
 * Not a unit test: a same-process A/B of {@link JvmSpinPool}'s hand-out on a chain of two parallel,
 * vectorized elementwise kernels ({@code B = A * 0.5 + 1}, then {@code A = B * 2 - 2}: each reads what the
 * other wrote): own block first in 4 chunks (the default), own block first in one chunk
 * ({@link JvmSpinPool#chunksPerBlock}), and the old hand-out from one shared counter
 * ({@link JvmSpinPool#sharedCounter}: one chunk per thread, in order, to whichever thread comes first), in
 * interleaved passes (the order rotates); prints the best and median time of one pair of kernels per pass.
 * Run with {@code java --add-modules jdk.incubator.vector -cp ... dev.kiln.jit.jvm.SpinPoolLocality [floats]
 * [threads] [passes]}.
 */
public final class SpinPoolLocality {
    private SpinPoolLocality() {}

    public static void main(String[] argv) {
        int n = argv.length > 0 ? Integer.parseInt(argv[0]) : 1 << 18;
        int threads = argv.length > 1
                ? Integer.parseInt(argv[1])
                : Runtime.getRuntime().availableProcessors();
        int passes = argv.length > 2 ? Integer.parseInt(argv[2]) : 6;
        JvmKernel first = new JvmBackend().compile(kernel("half", n, 0.5f, 1f), JvmTarget.jvm(threads));
        JvmKernel second = new JvmBackend().compile(kernel("twice", n, 2f, -2f), JvmTarget.jvm(threads));
        try (NDArray a = NDArray.random(DType.FLOAT32, 1, n);
                NDArray b = NDArray.allocate(DType.FLOAT32, n)) {
            Runnable pair = () -> {
                first.call(a, b);
                second.call(b, a);
            };
            int reps = (int) Math.max(200, (1L << 28) / n);
            for (int w = 0; w < 3; w++) time(pair, reps);
            double[][] best = new double[3][passes], median = new double[3][passes];
            for (int p = 0; p < passes; p++) {
                for (int v = 0; v < 3; v++) {
                    int which = (v + p) % 3;
                    JvmSpinPool.sharedCounter = which == 2;
                    JvmSpinPool.chunksPerBlock = which == 1 ? 1 : JvmSpinPool.CHUNKS_PER_THREAD;
                    double[] t = time(pair, reps);
                    best[which][p] = t[0];
                    median[which][p] = t[t.length / 2];
                }
            }
            JvmSpinPool.sharedCounter = false;
            JvmSpinPool.chunksPerBlock = JvmSpinPool.CHUNKS_PER_THREAD;
            System.out.printf(
                    "%d floats, %d threads, %d passes of %d kernel pairs (us per pair)%n", n, threads, passes, reps);
            String[] names = {"own block, 4 chunks", "own block, 1 chunk", "shared counter"};
            for (int v = 0; v < 3; v++) {
                System.out.printf("%-20s best   %s%n", names[v], row(best[v]));
                System.out.printf("%-20s median %s%n", "", row(median[v]));
            }
        }
    }

    private static String row(double[] us) {
        StringBuilder sb = new StringBuilder();
        for (double u : us) sb.append(String.format(" %8.2f", u));
        return sb.toString();
    }

    /** Sorted times of {@code reps} runs of {@code r}, in microseconds. */
    private static double[] time(Runnable r, int reps) {
        double[] t = new double[reps];
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            r.run();
            t[i] = (System.nanoTime() - t0) / 1e3;
        }
        java.util.Arrays.sort(t);
        return t;
    }

    private static PrimFunc kernel(String name, int n, float mul, float add) {
        Tensor x = placeholder("X", DType.FLOAT32, n);
        Tensor y = compute("Y", shape(n), i -> x.at(i).mul(mul).add(add));
        ScheduleBuilder s = ScheduleBuilder.on(ComputeDAG.of(y));
        var parts = s.stage("Y").split("i", 64);
        s.stage("Y").vectorize(parts.get(1));
        s.stage("Y").parallel(parts.get(0));
        return Lowering.lower(name, s.build());
    }
}
