package dev.kiln.bench.lowp;

import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.Locale;

/**
 * {@code threads dtype passes tiles}: hand-scheduled tensorized GEMM 1024 tiles (as LowpTileStudy) on B packed per
 * 16-column panel ({@code [N/16, K/g, 16, g]}, Kiln's layout: a tile of v vectors reads v streams K*g*16 bytes apart)
 * and on B packed per tile ({@code [N/(16v), K/g, v, 16, g]}: a k step's v vectors contiguous, as brgemm packs),
 * the same tile in the same process, passes alternating.
 */
public final class LowpPackStudy {
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[0]);
        String dtype = a[1];
        int passes = Integer.parseInt(a[2]);
        int[][] tiles = LowpTileStudy.parseTiles(a[3]);
        long n = 1024;
        CpuTarget target = Target.cpu().withCores(threads);
        LowpCase c = new LowpCase("gemm", new long[] {n, n, n}, dtype);
        NDArray x = c.input(1), w = c.weight(2), ref = c.reference(x, w), panel = c.packed(w);
        int g = LowPrecision.group(c.inType());
        String intrinsic = dtype.equals("int8") ? TensorIntrinsics.VNNI_U8S8 : TensorIntrinsics.BF16_DOT;
        double tol = dtype.equals("int8") ? 0 : 1e-3;
        KernelTimer timer = new KernelTimer(2, 0.3, 7, 0.05);
        CompiledKernel[][] k = new CompiledKernel[tiles.length][2];
        NDArray[] wide = new NDArray[tiles.length];
        for (int i = 0; i < tiles.length; i++) {
            int rows = tiles[i][0], v = tiles[i][1];
            k[i][0] = LowpTileStudy.tile(c.dag(), "matmul_packed", rows, v, g, intrinsic, target, "panel");
            k[i][1] = LowpTileStudy.tile(wideDag(c, v, g), "matmul_wide", rows, v, g, intrinsic, target, "wide");
            wide[i] = widePack(c, w, v, g);
        }
        System.out.println("LowpPackStudy: " + dtype + " GEMM " + n + ", " + threads + " threads; load "
                + dev.kiln.bench.network.BenchHost.loadAverage());
        double flops = 2.0 * n * n * n;
        for (int p = 0; p < passes; p++) {
            for (int i = 0; i < tiles.length; i++) {
                for (int lay = 0; lay < 2; lay++) {
                    NDArray wt = lay == 0 ? panel : wide[i];
                    NDArray out = NDArray.allocate(c.outType(), c.outShape());
                    CompiledKernel kk = k[i][lay];
                    kk.call(x, wt, out);
                    Comparison cmp = out.compareTo(ref, tol, tol);
                    KernelTimer.Timing t = timer.time(() -> kk.call(x, wt, out));
                    System.out.printf(
                            Locale.ROOT,
                            "pass %d  %2dx%d %-6s median %.3f ms  min %.3f ms  %.0f GFLOP/s  %s%n",
                            p,
                            tiles[i][0],
                            tiles[i][1],
                            lay == 0 ? "panel" : "wide",
                            t.medianMs(),
                            t.minMs(),
                            flops / t.medianMs() / 1e6,
                            cmp.ok() ? "checked" : "MISMATCH " + cmp);
                }
            }
        }
        System.out.println("load " + dev.kiln.bench.network.BenchHost.loadAverage());
    }

    static ComputeDAG wideDag(LowpCase c, int v, int g) {
        long m = c.inShape()[0], kk = c.inShape()[1], n = c.outShape()[1];
        Tensor x = Te.placeholder("x", c.inType(), m, kk);
        Tensor wp = Te.placeholder("w_wide", c.weightType(), n / (16L * v), kk / g, v, 16, g);
        DType acc = LowPrecision.accumulator(c.inType());
        Tensor out = Te.computeN("matmul_wide", "matmul", Shape.of(m, n), Te.names("m", "n"), idx -> {
            IterVar r = Te.reduceAxis(kk, "k");
            IterVar mi = idx.get(0), ni = idx.get(1);
            Expr wv = wp.at(ni.floordiv(16L * v), r.floordiv(g), ni.floordiv(16).floormod(v), ni.floormod(16),
                    r.floormod(g));
            return Te.sum(r, x.at(mi, r).cast(acc).mul(wv.cast(acc)));
        });
        return ComputeDAG.of(out);
    }

    static NDArray widePack(LowpCase c, NDArray w, int v, int g) {
        long n = c.outShape()[1], kk = c.inShape()[1];
        NDArray out = NDArray.allocate(c.weightType(), n / (16L * v), kk / g, v, 16, g);
        for (long i = 0; i < out.numElements(); i++) {
            long[] q = out.unravel(i);
            out.setDoubleFlat(w.getDouble(q[1] * g + q[4], (q[0] * v + q[2]) * 16 + q[3]), i);
        }
        return out;
    }
}
