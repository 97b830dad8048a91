package dev.kiln.bench.lowp;

import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.util.Locale;

/**
 * Hand-scheduled bf16 GEMMs against oneDNN's bf16 matmul in one process (issue 17): register tiles
 * {@code rows x vectors} of {@code vdpbf16ps} (8 x 2, Kiln's tuned shape; 6 x 4 and 14 x 2, brgemm's
 * shapes), the k steps serial inside each tile over the whole K, the row tiles parallel. Tells
 * whether the tensorized tile itself or the search's schedule around it is what trails oneDNN.
 * Arguments: {@code [threads [n [passes]]]}, default 2, 1024, 3; prints one line per kernel and pass.
 */
public final class LowpTileStudy {
    private LowpTileStudy() {}

    /**
     * Runs the study.
     *
     * @param args threads, GEMM size, passes (all optional)
     */
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long n = args.length > 1 ? Long.parseLong(args[1]) : 1024;
        int passes = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        if (n % 16 != 0) throw new KilnException("LowpTileStudy: n must be a multiple of 16");
        CpuTarget target = Target.cpu().withCores(threads);
        String why = LowpCommand.unavailable(target, "bf16");
        if (why != null) throw new KilnException("LowpTileStudy: " + why);
        LowpCase c = new LowpCase("gemm", new long[] {n, n, n}, "bf16");
        NDArray x = c.input(1), w = c.weight(2), ref = c.reference(x, w), packed = c.packed(w);
        KernelTimer timer = new KernelTimer(2, 0.3, 7, 0.05);
        String note = DnnlLowp.setThreads(threads);
        int[][] tiles = {{8, 2}, {6, 4}, {14, 2}};
        CompiledKernel[] kernels = new CompiledKernel[tiles.length];
        for (int i = 0; i < tiles.length; i++) {
            ScheduleBuilder s = ScheduleBuilder.on(c.dag());
            var st = s.stage("matmul_packed");
            st.split("m", tiles[i][0]);
            st.split("n", tiles[i][1], 16);
            st.split("k", 2);
            st.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "n.2", "k.1");
            st.tensorize("n.2", TensorIntrinsics.BF16_DOT);
            st.unroll("m.1");
            st.unroll("n.1");
            st.parallel("m.0");
            kernels[i] = Backend.forTarget(target)
                    .compile(Lowering.lower("bf16_" + tiles[i][0] + "x" + tiles[i][1], s.build()), target);
        }
        System.out.println("LowpTileStudy: bf16 GEMM " + n + ", " + threads + " threads"
                + (note == null ? "" : ", " + note) + "; load " + dev.kiln.bench.network.NetworkBench.loadAverage());
        double flops = 2.0 * n * n * n;
        try (DnnlLowp onednn = new DnnlLowp()) {
            for (int p = 0; p < passes; p++) {
                DnnlLowp.Result d = onednn.run(c, x, w, timer);
                print(p, "onednn " + d.impl(), d.timing(), flops, d.output().compareTo(ref, 1e-3, 1e-3));
                for (int i = 0; i < tiles.length; i++) {
                    NDArray out = NDArray.allocate(c.outType(), c.outShape());
                    CompiledKernel k = kernels[i];
                    k.call(x, packed, out);
                    Comparison cmp = out.compareTo(ref, 1e-3, 1e-3);
                    print(
                            p,
                            "kiln " + tiles[i][0] + "x" + tiles[i][1],
                            timer.time(() -> k.call(x, packed, out)),
                            flops,
                            cmp);
                }
            }
        } finally {
            for (CompiledKernel k : kernels) k.close();
        }
        System.out.println("load " + dev.kiln.bench.network.NetworkBench.loadAverage());
    }

    private static void print(int pass, String what, KernelTimer.Timing t, double flops, Comparison cmp) {
        System.out.printf(
                Locale.ROOT,
                "pass %d  %-40s median %.3f ms  min %.3f ms  %.0f GFLOP/s  %s%n",
                pass,
                what,
                t.medianMs(),
                t.minMs(),
                flops / t.medianMs() / 1e6,
                cmp.ok() ? "checked" : "MISMATCH " + cmp);
    }
}
