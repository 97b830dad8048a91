package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * model log threads aheads(comma) task...: each task's log best compiled without software prefetch and with a
 * prefetch N bytes ahead of every contiguous vector load of an argument (for each N of aheads), outputs compared,
 * then timed alternately in blocks of 20 calls with every argument evicted before each call (the network's state)
 * and warm, 15 rounds; medians, and the sums over the tasks.
 */
public class PrefetchAB {
    static final String EVICT = System.getProperty("evict", ".*");

    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        var tasks = Probes.tasks(a[0], target);
        String[] aheads = a[3].split(",");
        int arms = aheads.length + 1;
        CacheEviction ev = Backend.forTarget(target).cacheEviction(target).orElseThrow();
        double[] coldSum = new double[arms], warmSum = new double[arms];
        for (int ti = 4; ti < a.length; ti++) {
            NetworkTask t = tasks.get(Integer.parseInt(a[ti]));
            var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
            var sch = WeightLayouts.of(t, best.schedule()).schedule();
            CompiledKernel[] k = new CompiledKernel[arms];
            PrimFunc f0 = null;
            for (int arm = 0; arm < arms; arm++) {
                String v = arm == 0 ? "0" : aheads[arm - 1];
                boolean slab = v.startsWith("slab");
                dev.kiln.jit.Memory.PREFETCH_AHEAD = slab ? 0 : Integer.parseInt(v);
                dev.kiln.jit.Memory.PREFETCH_LOCALITY = slab ? Integer.parseInt(v.substring(4)) : 3;
                PrimFunc f = Lowering.pipeline(target).lower("pf" + v, sch, Lowering.Options.defaults());
                if (slab) {
                    f = PrefetchSlab.apply(f);
                    if (arm == 1) System.out.println("task " + t.id() + PrefetchSlab.note);
                }
                if (f0 == null) f0 = f;
                k[arm] = Backend.forTarget(target).compile(f, target);
                dev.kiln.jit.Memory.PREFETCH_LOCALITY = 3;
            }
            dev.kiln.jit.Memory.PREFETCH_AHEAD = 0;
            NDArray[] args = Probes.randomArgs(f0.params());
            int out = args.length - 1;
            NDArray ref = null;
            StringBuilder cmp = new StringBuilder();
            for (int arm = 0; arm < arms; arm++) {
                NDArray[] as = args.clone();
                as[out] = NDArray.allocate(f0.params().get(out));
                k[arm].call(as);
                if (ref == null) ref = as[out];
                else cmp.append(ref.compareTo(as[out], 1e-4, 1e-4).ok() ? "" : " arm " + arm + " DIFFERS");
            }
            double[][] cold = new double[arms][15 * 20], warm = new double[arms][15 * 20];
            for (int r = 0; r < 15; r++)
                for (int arm = 0; arm < arms; arm++) {
                    for (int i = 0; i < 20; i++) {
                        for (int xi = 0; xi < args.length; xi++)
                            if (f0.params().get(xi).name().matches(EVICT)) ev.evict(args[xi].segment());
                        long t0 = System.nanoTime();
                        k[arm].call(args);
                        cold[arm][r * 20 + i] = (System.nanoTime() - t0) / 1e6;
                    }
                    for (int i = 0; i < 20; i++) {
                        long t0 = System.nanoTime();
                        k[arm].call(args);
                        warm[arm][r * 20 + i] = (System.nanoTime() - t0) / 1e6;
                    }
                }
            StringBuilder line = new StringBuilder(String.format("task %2d tuned %.3f:", t.id(), best.seconds() * 1e3));
            for (int arm = 0; arm < arms; arm++) {
                Arrays.sort(cold[arm]);
                Arrays.sort(warm[arm]);
                coldSum[arm] += t.weight() * cold[arm][150];
                warmSum[arm] += t.weight() * warm[arm][150];
                line.append(String.format(" | %s cold %.4f warm %.4f", arm == 0 ? "none" : aheads[arm - 1],
                        cold[arm][150], warm[arm][150]));
            }
            System.out.println(line + cmp.toString());
            for (CompiledKernel c : k) c.close();
        }
        StringBuilder s = new StringBuilder("sums weighted by calls:");
        for (int arm = 0; arm < arms; arm++)
            s.append(String.format(" | %s cold %.4f warm %.4f", arm == 0 ? "none" : aheads[arm - 1], coldSum[arm],
                    warmSum[arm]));
        System.out.println(s);
    }
}
