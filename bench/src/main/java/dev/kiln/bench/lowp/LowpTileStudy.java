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
 * Hand-scheduled tensorized GEMMs against oneDNN's matmul of the same precision in one process (issue 17):
 * register tiles {@code rows x vectors} of {@code vdpbf16ps} (bf16) or {@code vpdpbusd} (int8), the k steps serial
 * inside each tile over the whole K, the row tiles parallel. Tells whether the tensorized tile itself or the search's
 * schedule around it is what trails oneDNN, and which tile shapes pay. Arguments:
 * {@code [threads [n [passes [dtype [tiles]]]]]}, default 2, 1024, 3, bf16 and {@code 8x2,6x4,14x2} (Kiln's tuned
 * shape of the seventh session and brgemm's); prints one line per kernel and pass.
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
        String dtype = args.length > 3 ? args[3] : "bf16";
        String tileList = args.length > 4 ? args[4] : "8x2,6x4,14x2";
        if (n % 16 != 0) throw new KilnException("LowpTileStudy: n must be a multiple of 16");
        if (!dtype.equals("bf16") && !dtype.equals("int8"))
            throw new KilnException("LowpTileStudy: dtype must be bf16 or int8, not " + dtype);
        String intrinsic = dtype.equals("int8") ? TensorIntrinsics.VNNI_U8S8 : TensorIntrinsics.BF16_DOT;
        int kStep = dtype.equals("int8") ? 4 : 2; // the elements of k one lane of the intrinsic sums
        CpuTarget target = Target.cpu().withCores(threads);
        String why = LowpCommand.unavailable(target, dtype);
        if (why != null) throw new KilnException("LowpTileStudy: " + why);
        LowpCase c = new LowpCase("gemm", new long[] {n, n, n}, dtype);
        NDArray x = c.input(1), w = c.weight(2), ref = c.reference(x, w), packed = c.packed(w);
        KernelTimer timer = new KernelTimer(2, 0.3, 7, 0.05);
        String note = DnnlLowp.setThreads(threads);
        int[][] tiles = parseTiles(tileList);
        double tol = dtype.equals("int8") ? 0 : 1e-3;
        CompiledKernel[] kernels = new CompiledKernel[tiles.length];
        for (int i = 0; i < tiles.length; i++) {
            kernels[i] = tile(c.dag(), "matmul_packed", tiles[i][0], tiles[i][1], kStep, intrinsic, target, dtype);
        }
        System.out.println("LowpTileStudy: " + dtype + " GEMM " + n + ", " + threads + " threads"
                + (note == null ? "" : ", " + note) + "; load " + dev.kiln.bench.network.BenchHost.loadAverage());
        double flops = 2.0 * n * n * n;
        try (DnnlLowp onednn = new DnnlLowp()) {
            for (int p = 0; p < passes; p++) {
                DnnlLowp.Result d = onednn.run(c, x, w, timer);
                print(p, "onednn " + d.impl(), d.timing(), flops, d.output().compareTo(ref, tol, tol));
                for (int i = 0; i < tiles.length; i++) {
                    NDArray out = NDArray.allocate(c.outType(), c.outShape());
                    CompiledKernel k = kernels[i];
                    k.call(x, packed, out);
                    Comparison cmp = out.compareTo(ref, tol, tol);
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
        System.out.println("load " + dev.kiln.bench.network.BenchHost.loadAverage());
    }

    /**
     * The tile {@code rows x vectors} of the GEMM stage {@code stage} (axes m, n, k) compiled: m split by the rows, n
     * into vectors of 16, k by the intrinsic's {@code kStep}, the whole K inside each tile, the intrinsic on the 16
     * lanes, the row and vector loops unrolled, the row tiles parallel; named {@code prefix_RxV}.
     */
    static CompiledKernel tile(
            dev.kiln.te.ComputeDAG dag,
            String stage,
            int rows,
            int vectors,
            int kStep,
            String intrinsic,
            CpuTarget target,
            String prefix) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var st = s.stage(stage);
        st.split("m", rows);
        st.split("n", vectors, 16);
        st.split("k", kStep);
        st.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "n.2", "k.1");
        st.tensorize("n.2", intrinsic);
        st.unroll("m.1");
        st.unroll("n.1");
        st.parallel("m.0");
        return Backend.forTarget(target)
                .compile(Lowering.lower(prefix + "_" + rows + "x" + vectors, s.build()), target);
    }

    /** {@code "8x2,6x4"}: rows x vectors per tile. */
    static int[][] parseTiles(String list) {
        String[] parts = list.split(",");
        int[][] tiles = new int[parts.length][];
        for (int i = 0; i < parts.length; i++) {
            String[] rv = parts[i].trim().split("x");
            try {
                if (rv.length != 2) throw new NumberFormatException(parts[i]);
                tiles[i] = new int[] {Integer.parseInt(rv[0]), Integer.parseInt(rv[1])};
            } catch (NumberFormatException e) {
                throw new KilnException("LowpTileStudy: tile '" + parts[i] + "' is not ROWSxVECTORS, e.g. 8x2");
            }
        }
        return tiles;
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
