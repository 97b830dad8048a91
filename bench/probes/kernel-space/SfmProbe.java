package dev.kiln.bench.space;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Softmax;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.nio.file.*;
import java.util.*;

/**
 * Softmax over rows: the search's form (rows left to LLVM), its rows vectorised by Kiln, and a 64-lane partial maximum;
 * medians of 301 calls, best of the passes, 1 thread; see README.md. {@code java ... SfmProbe N PASSES [DUMP-DIR]}.
 */
public final class SfmProbe {
    static ScheduleBuilder base(ComputeDAG dag, int kSplit, boolean vecExp, boolean vecOut) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("softmax_max").split("k", kSplit);
        s.stage("softmax_max").rfactor("k.0", 1);
        s.stage("softmax_sum").computeAt("softmax", "i");
        s.stage("softmax_exp").computeAt("softmax", "i");
        s.stage("softmax_max").computeAt("softmax", "i");
        s.stage("softmax_max.rf").computeAt("softmax", "i");
        s.stage("softmax").parallel("i");
        if (vecExp) s.stage("softmax_exp").vectorize("j");
        if (vecOut) s.stage("softmax").vectorize("j");
        return s;
    }

    static ScheduleBuilder vecMax(ComputeDAG dag, int lanes, boolean vecExp, boolean vecOut) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("softmax_max").split("k", lanes);
        s.stage("softmax_max").rfactor("k.1", 1);
        s.stage("softmax_sum").computeAt("softmax", "i");
        s.stage("softmax_exp").computeAt("softmax", "i");
        s.stage("softmax_max").computeAt("softmax", "i");
        var rf = s.stage("softmax_max.rf");
        rf.computeAt("softmax", "i");
        System.out.println("rf loops: " + rf.loops());
        s.stage("softmax").parallel("i");
        if (vecExp) s.stage("softmax_exp").vectorize("j");
        if (vecOut) s.stage("softmax").vectorize("j");
        return s;
    }

    static double time(CompiledKernel k, ComputeDAG dag) {
        var a = dev.kiln.runtime.NDArray.random(DType.FLOAT32, 1, dag.arguments().get(0).shape().toArray());
        var b = dev.kiln.runtime.NDArray.allocate(DType.FLOAT32, dag.arguments().get(1).shape().toArray());
        for (int i = 0; i < 50; i++) k.call(a, b);
        double[] t = new double[301];
        for (int i = 0; i < t.length; i++) {
            long s0 = System.nanoTime();
            k.call(a, b);
            t[i] = (System.nanoTime() - s0) / 1e9;
        }
        a.close(); b.close();
        Arrays.sort(t);
        return t[t.length / 2];
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int passes = Integer.parseInt(args[1]);
        String dump = args.length > 2 ? args[2] : null;
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true).withCores(1);
        ComputeDAG dag = ComputeDAG.of(Softmax.softmax(Te.placeholder("A", DType.FLOAT32, n, n), 1));
        System.out.println("load before: " + Timing.loadAverage());
        List<String> names = new ArrayList<>();
        List<Schedule> ss = new ArrayList<>();
        names.add("log k4 none"); ss.add(base(dag, 4, false, false).build());
        names.add("k4 vecExp vecOut"); ss.add(base(dag, 4, true, true).build());
        ScheduleBuilder m = vecMax(dag, 64, true, true);
        // reorder rf loops so the vector lanes are innermost
        var rf = m.stage("softmax_max.rf");
        List<String> ln = new ArrayList<>();
        for (var l : rf.loops()) ln.add(l.toString());
        System.out.println("rf loop names " + ln);
        try {
            rf.reorder(ln.get(0), ln.get(2), ln.get(1));
            rf.vectorize(ln.get(1));
            names.add("max64 vecExp vecOut"); ss.add(m.build());
        } catch (Exception e) { System.out.println("vecMax failed: " + e); }
        List<CompiledKernel> ks = new ArrayList<>();
        for (int q = 0; q < ss.size(); q++) {
            var f = Lowering.lower("sfm", ss.get(q));
            ks.add(Backend.forTarget(target).compile(f, target));
            if (dump != null) {
                Files.createDirectories(Path.of(dump));
                String tag = names.get(q).replaceAll("[^a-zA-Z0-9]+", "_");
                Files.writeString(Path.of(dump, tag + ".tir"), f.toString());
                Files.writeString(Path.of(dump, tag + ".s"), ks.get(q).source());
            }
        }
        double[] best = new double[ss.size()];
        Arrays.fill(best, Double.MAX_VALUE);
        for (int p = 0; p < passes; p++)
            for (int q = 0; q < ss.size(); q++) best[q] = Math.min(best[q], time(ks.get(q), dag));
        for (int q = 0; q < ss.size(); q++) System.out.printf(Locale.ROOT, "%-30s %8.4f ms%n", names.get(q), best[q] * 1e3);
        System.out.println("load after: " + Timing.loadAverage());
    }
}
