package dev.kiln.bench.space;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.bench.suite.SuiteWorkloads;
import dev.kiln.lower.Lowering;
import dev.kiln.lower.Pipeline;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One logged conv program lowered with and without {@code skip-padded-terms}, timed alternately in one process
 * (blocks of calls, arms interleaved, medians), outputs compared; see README.md.
 * {@code java ... PadSkip OP CONFIG LOG THREADS [ROUNDS]}, e.g. {@code PadSkip C2D 1,7,7,512,512,3,1,1 L-1t.jsonl 1}.
 */
public final class PadSkip {
    public static void main(String[] a) throws Exception {
        SuiteWorkload w = SuiteWorkloads.parse(a[0] + "\tx\t" + a[1] + "\n", "arg").getFirst();
        int threads = Integer.parseInt(a[3]);
        int rounds = a.length > 4 ? Integer.parseInt(a[4]) : 15;
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true).withCores(threads);
        var task = AutoSchedule.task(SuiteDags.of(w), target, SuiteDags.layoutFree(w));
        var packed = task.rewriteLayouts(AutoSchedule.bestSchedule(task, Path.of(a[2]))).schedule();
        Pipeline with = Lowering.pipeline(target);
        List<Lowering.Pass> loops = new ArrayList<>();
        for (var ph : with.phases())
            if (ph.name().equals("loops"))
                for (var p : ph.passes()) if (!p.name().equals("skip-padded-terms")) loops.add(p);
        Pipeline without = with.withPhase(new Lowering.Phase("loops", loops));
        PrimFunc fw = with.lower("skip", packed, Lowering.Options.defaults());
        PrimFunc fo = without.lower("noskip", packed, Lowering.Options.defaults());
        if (Boolean.getBoolean("show")) System.out.println(fw); // -Dshow=true: the program with the pass
        System.out.println(w + " " + threads + "t, load before " + Timing.loadAverage() + ", guards: "
                + fw.toString().split("if \\(", -1).length + " ifs with the pass, "
                + fo.toString().split("if \\(", -1).length + " without");
        try (CompiledKernel kw = Backend.forTarget(target).compile(fw, target);
                CompiledKernel ko = Backend.forTarget(target).compile(fo, target)) {
            NDArray[] args = new NDArray[fw.params().size()];
            for (int i = 0; i < args.length; i++) args[i] = NDArray.allocate(fw.params().get(i)).fillRandom(11 + i);
            NDArray[] args2 = args.clone();
            int out = args.length - 1;
            args2[out] = NDArray.allocate(fw.params().get(out));
            kw.call(args);
            ko.call(args2);
            System.out.println("  outputs: " + args[out].compareTo(args2[out], 1e-4, 1e-4).report());
            int block = 20;
            double[][] t = new double[2][rounds * block];
            for (int i = 0; i < 50; i++) {
                kw.call(args);
                ko.call(args);
            }
            for (int r = 0; r < rounds; r++) {
                for (int arm = 0; arm < 2; arm++) {
                    CompiledKernel k = ((r + arm) % 2 == 0) ? kw : ko;
                    int which = k == kw ? 0 : 1;
                    for (int i = 0; i < block; i++) {
                        long t0 = System.nanoTime();
                        k.call(args);
                        t[which][r * block + i] = (System.nanoTime() - t0) / 1e6;
                    }
                }
            }
            Arrays.sort(t[0]);
            Arrays.sort(t[1]);
            int n = rounds * block;
            System.out.printf("  with the pass: median %.4f ms (p10 %.4f, p90 %.4f); without: %.4f (p10 %.4f, p90 %.4f);"
                    + " speed-up %.3fx; load after %s%n", t[0][n / 2], t[0][n / 10], t[0][9 * n / 10], t[1][n / 2],
                    t[1][n / 10], t[1][9 * n / 10], t[1][n / 2] / t[0][n / 2], Timing.loadAverage());
            // timing only (the output is wrong): the pass's program without its loop nests that write the pad
            try (CompiledKernel kn = Backend.forTarget(target)
                    .compile(TbsKnock.knock(fw, java.util.Set.of("pad")), target)) {
                double[] k = new double[n];
                for (int i = 0; i < 50; i++) kn.call(args);
                for (int i = 0; i < n; i++) {
                    long t0 = System.nanoTime();
                    kn.call(args);
                    k[i] = (System.nanoTime() - t0) / 1e6;
                }
                Arrays.sort(k);
                System.out.printf("  with the pass, the pad's copy removed (timing only): median %.4f ms%n", k[n / 2]);
            }
        }
    }
}
