package dev.kiln.bench.lowp;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.Buffer;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** dtype log threads: the log's best GEMM 1024 with x, w and out each at page offsets 0/1/2/3 KiB, warm medians. */
public final class LowpPlace {
    public static void main(String[] a) throws Exception {
        String dtype = a[0];
        int threads = Integer.parseInt(a[2]);
        LowpCase c = new LowpCase("gemm", new long[] {1024, 1024, 1024}, dtype);
        CpuTarget target = Target.cpu().withCores(threads).withFastMath(true);
        NDArray x = c.input(1), w = c.weight(2), packed = c.packed(w);
        try (CompiledKernel k = AutoSchedule.build(c.dag(), target, Path.of(a[1]))) {
            List<Buffer> ps = k.func().params();
            long[] offs = {0, 1024, 2048, 3072};
            int n = 15;
            for (int round = 0; round < 2; round++) {
                for (long ox : offs)
                    for (long ow : offs) {
                        StringBuilder sb = new StringBuilder(String.format("x +%4d w +%4d |", ox, ow));
                        for (long oo : offs) {
                            NDArray ax = NDArray.allocateOffset(ps.get(0), 4096 * 4 + ox);
                            ax.copyFrom(x);
                            NDArray aw = NDArray.allocateOffset(ps.get(1), 4096 * 4 + ow);
                            aw.copyFrom(packed);
                            NDArray ao = NDArray.allocateOffset(ps.get(2), 4096 * 4 + oo);
                            for (int i = 0; i < 3; i++) k.call(ax, aw, ao);
                            double[] t = new double[n];
                            for (int i = 0; i < n; i++) {
                                long t0 = System.nanoTime();
                                k.call(ax, aw, ao);
                                t[i] = (System.nanoTime() - t0) / 1e6;
                            }
                            Arrays.sort(t);
                            sb.append(String.format("  out +%4d: %6.2f", oo, t[n / 2]));
                        }
                        System.out.println(sb);
                    }
                System.out.println();
            }
        }
    }
}
