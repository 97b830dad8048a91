package dev.kiln.bench.space;

import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.*;

/**
 * TBS 1,128,12,64 (attention scores + softmax) at 1 thread: the thirtieth session's best logged program, and the same
 * with its output rows ({@code softmax = exp / sum}, a tiled stage's 128-long innermost loop) vectorised; outputs
 * compared, medians of 301 calls, best of the passes. {@code java ... TbsProbe PASSES}.
 */
public final class TbsProbe {
    /**
     * value_T's copy: 0 as logged (scalar, l outer), 1 in 16 x 16 blocks with l vectorised (strided loads), 2 the
     * same with k vectorised (strided stores), 3 as 1 with the k loop unrolled, 4 as 1 in 16 x 8 blocks.
     */
    static int vmode = 0;

    static Schedule logged(ComputeDAG dag, boolean vecOut) {
        return logged(dag, vecOut, "k.0");
    }

    /** The logged program with the softmax's max, exp and sums computed at {@code rowLevel} of its output. */
    static Schedule logged(ComputeDAG dag, boolean vecOut, String rowLevel) {
        return logged(dag, vecOut, rowLevel, 1);
    }

    /**
     * ... with the row loops of the maximum and the exp split by {@code rows} and the inner part unrolled; rows -1:
     * query_T inlined into the scores instead.
     */
    static Schedule logged(ComputeDAG dag, boolean vecOut, String rowLevel, int rows) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("softmax_sum").split("k", 8);
        s.stage("softmax_sum").rfactor("k.1", 3);
        s.stage("softmax_sum.rf").reorder("i", "j", "l", "k.0", "k.1");
        s.stage("scores").split("i", 1, 1, 1);
        s.stage("scores").split("j", 4, 1, 1);
        s.stage("scores").split("m", 11, 1, 6);
        s.stage("scores").split("l", 1, 1, 64);
        s.stage("scores").split("k", 64);
        s.stage("scores").reorder("i.0", "j.0", "m.0", "l.0", "i.1", "j.1", "m.1", "l.1", "k.0", "i.2", "j.2", "m.2",
                "l.2", "k.1", "i.3", "j.3", "m.3", "l.3");
        s.stage("softmax").followSplit("i", 3, 1);
        s.stage("softmax").followSplit("j", 4, 1);
        s.stage("softmax").followSplit("k", 5, 1);
        s.stage("softmax").reorder("i.0", "j.0", "k.0", "i.1", "j.1", "k.1", "l");
        s.stage("softmax_sum").computeAt("softmax", rowLevel);
        s.stage("softmax_sum.rf").computeAt("softmax", rowLevel);
        s.stage("softmax_exp").computeAt("softmax", rowLevel);
        s.stage("softmax_max").computeAt("softmax", rowLevel);
        s.stage("scores").computeAt("softmax", "k.0");
        s.stage("value_T").cacheRead("local", "scores");
        s.stage("value_T.local").computeAt("scores", "k.0");
        s.stage("scores").reorder("i.0", "j.0", "m.0", "l.0", "k.0", "i.1", "j.1", "m.1", "l.1", "i.2", "j.2", "m.2",
                "l.2", "k.1", "i.3", "j.3", "m.3", "l.3");
        int vb = vmode == 0 ? 1 : 16;
        s.stage("value_T").split("l", vb);
        s.stage("value_T").split("k", vmode == 0 || vmode == 4 ? 8 : 16);
        if (vmode == 2) s.stage("value_T").reorder("i", "j", "l.0", "k.0", "l.1", "k.1");
        else s.stage("value_T").reorder("i", "j", "l.0", "k.0", "k.1", "l.1");
        if (rows >= 0) {
            s.stage("query_T").fuse("i", "j", "k");
            s.stage("query_T").parallel("i@j@k@");
        } else s.stage("query_T").computeInline();
        s.stage("value_T").fuse("i", "j", "l.0");
        s.stage("value_T").parallel("i@j@l.0@");
        s.stage("softmax").fuse("i.0", "j.0", "k.0");
        s.stage("softmax").parallel("i.0@j.0@k.0@");
        s.stage("scores").pragma("i.0", "auto_unroll_max_step$64");
        s.stage("softmax_max").pragma("i", "auto_unroll_max_step$16");
        s.stage("softmax_sum.rf").pragma("i", "auto_unroll_max_step$64");
        s.stage("softmax_sum").pragma("i", "auto_unroll_max_step$16");
        if (rows >= 0) s.stage("query_T").vectorize("l");
        s.stage("value_T").vectorize(vmode == 2 ? "k.1" : "l.1");
        if (vmode == 3) s.stage("value_T").unroll("k.1");
        s.stage("value_T.local").vectorize("ax3");
        s.stage("scores").vectorize("l.3");
        s.stage("softmax_exp").vectorize("l");
        s.stage("softmax_sum.rf").vectorize("k.1");
        if (vecOut) s.stage("softmax").vectorize("l");
        if (rows > 1) {
            s.stage("softmax_max").split("l", rows);
            s.stage("softmax_max").unroll("l.1");
            s.stage("softmax_exp").split("k", rows);
            s.stage("softmax_exp").reorder("i", "j", "k.0", "k.1", "l");
            s.stage("softmax_exp").unroll("k.1");
        }
        return s.build();
    }

    static double time(CompiledKernel k, NDArray[] args) {
        for (int i = 0; i < 30; i++) k.call(args);
        double[] t = new double[301];
        for (int i = 0; i < t.length; i++) {
            long s0 = System.nanoTime();
            k.call(args);
            t[i] = (System.nanoTime() - s0) / 1e9;
        }
        Arrays.sort(t);
        return t[t.length / 2];
    }

    public static void main(String[] a) throws Exception {
        int passes = Integer.parseInt(a[0]);
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true).withCores(1);
        ComputeDAG dag = SuiteDags.of(new SuiteWorkload("TBS", List.of(1L, 128L, 12L, 64L), "probe"));
        System.out.println("load before: " + Timing.loadAverage());
        String[] names = {"logged", "logged + output rows vectorised"};
        List<CompiledKernel> ks = new ArrayList<>();
        for (int v = 0; v < 2; v++) {
            var f = Lowering.lower("tbs", logged(dag, v == 1));
            ks.add(Backend.forTarget(target).compile(f, target));
        }
        List<NDArray[]> args = new ArrayList<>();
        for (int v = 0; v < 2; v++) {
            List<NDArray> x = new ArrayList<>();
            int seed = 1;
            for (Tensor t : dag.arguments()) {
                x.add(t.isPlaceholder() ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                        : NDArray.allocate(t.dtype(), t.shape().toArray()));
            }
            args.add(x.toArray(NDArray[]::new));
            ks.get(v).call(args.get(v));
        }
        NDArray o0 = args.get(0)[args.get(0).length - 1], o1 = args.get(1)[args.get(1).length - 1];
        o1.assertClose(o0, 1e-5, 1e-6);
        System.out.println("outputs agree");
        double[] best = {Double.MAX_VALUE, Double.MAX_VALUE};
        for (int p = 0; p < passes; p++)
            for (int v = 0; v < 2; v++) best[v] = Math.min(best[v], time(ks.get(v), args.get(v)));
        for (int v = 0; v < 2; v++) System.out.printf(Locale.ROOT, "%-40s %8.4f ms%n", names[v], best[v] * 1e3);
        System.out.println("load after: " + Timing.loadAverage());
    }
}
