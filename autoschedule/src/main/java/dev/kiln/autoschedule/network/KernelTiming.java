package dev.kiln.autoschedule.network;

import dev.kiln.graph.Graph;
import dev.kiln.graph.Value;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import java.util.Arrays;
import java.util.List;

/** Times one kernel of a network at build time (to choose between weight layouts). */
final class KernelTiming {
    private KernelTiming() {}

    /** A kernel's arguments and which of them are temporaries of the timing (closed after it). */
    record Arguments(NDArray[] arrays, boolean[] temporary) {}

    /** The arguments of {@code group}'s kernel: its constants as {@code layouts} binds them, seeded random activations, a fresh output. */
    static Arguments arguments(Graph g, FusedGroup group, WeightLayouts layouts) {
        List<String> args = group.dag().arguments();
        NDArray[] out = new NDArray[args.size()];
        boolean[] temp = new boolean[args.size()];
        for (int a = 0; a < args.size(); a++) {
            String v = args.get(a);
            Value val = g.value(v);
            temp[a] = !g.isConstant(v);
            out[a] = temp[a] ? NDArray.random(val.dtype(), 1000 + a, val.dims()) : layouts.constant(a, v, g.constant(v));
        }
        return new Arguments(out, temp);
    }

    /**
     * The median time of one call, in seconds: one warm-up call, then 5 batches of as many calls
     * as fill about a millisecond. The arrays made by {@link #arguments} (not the constants) are
     * closed afterwards.
     */
    static double median(CompiledKernel k, Arguments args) {
        NDArray[] a = args.arrays();
        try {
            long t0 = System.nanoTime();
            k.call(a);
            long one = Math.max(1, System.nanoTime() - t0);
            int n = (int) Math.max(1, Math.min(1000, 1_000_000L / one));
            double[] per = new double[5];
            for (int b = 0; b < per.length; b++) {
                long s = System.nanoTime();
                for (int i = 0; i < n; i++) k.call(a);
                per[b] = (System.nanoTime() - s) / 1e9 / n;
            }
            Arrays.sort(per);
            return per[per.length / 2];
        } finally {
            for (int i = 0; i < a.length; i++) if (args.temporary()[i]) a[i].close();
        }
    }
}
