package dev.kiln.bench.space;

import dev.kiln.bench.network.BenchHost;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.OpenBlas;
import dev.kiln.target.CompiledKernel;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bytedeco.javacpp.FloatPointer;

/**
 * Timing helpers of the search-space benchmarks: medians of back-to-back calls and OpenBLAS (the load average is
 * network-bench's).
 */
final class Timing {
    private Timing() {}

    /** The median of 11 calls of a compiled kernel after 3 warm-up calls, on seeded random inputs. */
    static double time(CompiledKernel k, ComputeDAG dag) {
        List<NDArray> a = new ArrayList<>();
        int seed = 1;
        for (Tensor t : dag.arguments()) {
            a.add(
                    t.isPlaceholder()
                            ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                            : NDArray.allocate(t.dtype(), t.shape().toArray()));
        }
        NDArray[] argv = a.toArray(NDArray[]::new);
        double t = median(() -> k.call(argv));
        a.forEach(NDArray::close);
        return t;
    }

    /** OpenBLAS sgemm of n x n matrices on {@code threads} threads. */
    static double openBlas(int n, int threads) {
        OpenBlas.setThreads(threads);
        try (FloatPointer x = new FloatPointer((long) n * n);
                FloatPointer y = new FloatPointer((long) n * n);
                FloatPointer z = new FloatPointer((long) n * n)) {
            for (long i = 0; i < (long) n * n; i++) {
                x.put(i, (float) Math.sin(i));
                y.put(i, (float) Math.cos(i));
            }
            return median(() -> OpenBlas.sgemm(n, n, n, x, y, z));
        }
    }

    static double median(Runnable r) {
        for (int i = 0; i < 3; i++) r.run();
        double[] t = new double[11];
        for (int i = 0; i < t.length; i++) {
            long s = System.nanoTime();
            r.run();
            t[i] = (System.nanoTime() - s) / 1e9;
        }
        Arrays.sort(t);
        return t[t.length / 2];
    }

    /** The load average, as network-bench prints it. */
    static String loadAverage() {
        return BenchHost.loadAverage();
    }
}
