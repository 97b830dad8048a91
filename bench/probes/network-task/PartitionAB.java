package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.lower.Lowering;
import dev.kiln.lower.Pipeline;
import dev.kiln.lower.SkipPaddedTerms;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * model log threads task...: each task's log best lowered with skip-padded-terms as it is (loops split at their
 * borders for three-variable conjuncts) and without that split, outputs compared, then timed alternately in blocks of
 * 20 calls with every argument evicted before each call (the tuner's state), 15 rounds; medians.
 */
public class PartitionAB {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        var tasks = Probes.tasks(a[0], target);
        CacheEviction ev = Backend.forTarget(target).cacheEviction(target).orElseThrow();
        Pipeline with = Lowering.pipeline(target);
        List<Lowering.Phase> phases = new ArrayList<>();
        Pipeline without = with;
        for (var ph : with.phases()) {
            if (!ph.name().equals("loops")) continue;
            List<Lowering.Pass> ps = new ArrayList<>();
            for (var p : ph.passes())
                ps.add(p.name().equals("skip-padded-terms")
                        ? new Lowering.Pass(p.name(), f -> SkipPaddedTerms.apply(f, false))
                        : p);
            without = with.withPhase(new Lowering.Phase("loops", ps));
        }
        for (int ti = 3; ti < a.length; ti++) {
            NetworkTask t = tasks.get(Integer.parseInt(a[ti]));
            var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
            var sch = WeightLayouts.of(t, best.schedule()).schedule();
            PrimFunc fw = with.lower("split", sch, Lowering.Options.defaults());
            PrimFunc fo = without.lower("nosplit", sch, Lowering.Options.defaults());
            boolean same = fw.toString().replace("split", "").equals(fo.toString().replace("nosplit", "").replace("split", ""));
            try (CompiledKernel kw = Backend.forTarget(target).compile(fw, target);
                    CompiledKernel ko = Backend.forTarget(target).compile(fo, target)) {
                NDArray[] args = Probes.randomArgs(fw.params());
                NDArray[] args2 = args.clone();
                int out = args.length - 1;
                args2[out] = NDArray.allocate(fw.params().get(out));
                kw.call(args);
                ko.call(args2);
                String cmp = args[out].compareTo(args2[out], 1e-4, 1e-4).report();
                double[][] s = new double[2][15 * 20];
                for (int r = 0; r < 15; r++)
                    for (int arm = 0; arm < 2; arm++)
                        for (int i = 0; i < 20; i++) {
                            for (NDArray x : args) ev.evict(x.segment());
                            long t0 = System.nanoTime();
                            (arm == 0 ? kw : ko).call(args);
                            s[arm][r * 20 + i] = (System.nanoTime() - t0) / 1e6;
                        }
                Arrays.sort(s[0]);
                Arrays.sort(s[1]);
                System.out.printf("task %d tuned %.3f%s: split %.4f, without %.4f ms: %.3fx; outputs %s%n", t.id(),
                        best.seconds() * 1e3, same ? " (same program)" : "", s[0][150], s[1][150], s[1][150] / s[0][150], cmp);
            }
        }
    }
}
