package dev.kiln.bench.space;

import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.*;
import java.util.*;

/**
 * Where the time of TbsProbe's logged TBS 1,128,12,64 program goes: the lowered program with every loop nest that
 * only writes one buffer removed (outputs wrong, timing only), timed against the whole program in the same passes.
 * {@code java ... TbsKnock PASSES [STEPS.json]}: with a file, that schedule's steps (a log record's {@code steps}
 * array) instead of TbsProbe's program, and only the removals.
 */
public final class TbsKnock {
    static Set<String> writes(Stmt s) {
        Set<String> out = new HashSet<>();
        new StmtRewriter() {
            @Override
            public Stmt visit(Stmt t) {
                if (t instanceof Store st) out.add(st.buffer().name());
                return rewriteChildren(t);
            }
        }.visit(s);
        return out;
    }

    static PrimFunc knock(PrimFunc f, Set<String> names) {
        Stmt body = new StmtRewriter() {
            @Override
            public Stmt visit(Stmt t) {
                if (t instanceof For) {
                    Set<String> w = writes(t);
                    if (!w.isEmpty() && names.containsAll(w)) return Seq.empty();
                }
                return rewriteChildren(t);
            }
        }.visit(f.body());
        return f.withBody(body);
    }

    /** {@code f} with every call of {@code exp} replaced by its argument (the loads and stores around it kept). */
    static PrimFunc noExp(PrimFunc f) {
        dev.kiln.ir.ExprRewriter er = new dev.kiln.ir.ExprRewriter() {
            @Override
            public dev.kiln.ir.Expr visit(dev.kiln.ir.Expr e) {
                if (e instanceof dev.kiln.ir.Call c && c.fn() == dev.kiln.ir.Intrinsic.EXP) return visit(c.args().get(0));
                return rewriteChildren(e);
            }
        };
        return f.withBody(new StmtRewriter() {
            @Override
            public dev.kiln.ir.Expr visitExpr(dev.kiln.ir.Expr e) {
                return er.visit(e);
            }
        }.visit(f.body()));
    }

    static NDArray[] arguments(ComputeDAG dag) {
        List<NDArray> x = new ArrayList<>();
        int seed = 1;
        for (Tensor t : dag.arguments())
            x.add(t.isPlaceholder() ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                    : NDArray.allocate(t.dtype(), t.shape().toArray()));
        return x.toArray(NDArray[]::new);
    }

    public static void main(String[] a) throws Exception {
        int passes = Integer.parseInt(a[0]);
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true).withCores(1);
        ComputeDAG dag = SuiteDags.of(new SuiteWorkload("TBS", List.of(1L, 128L, 12L, 64L), "probe"));
        System.out.println("load before: " + Timing.loadAverage());
        // a schedule's steps as JSON (the "steps" array of a log record) in place of TbsProbe's logged program; the
        // TbsProbe variants are then left out
        boolean given = a.length > 1 && !a[1].equals("show");
        dev.kiln.schedule.Schedule sched = given
                ? dev.kiln.schedule.Schedule.fromSteps(
                        new com.fasterxml.jackson.databind.ObjectMapper()
                                .readTree(java.nio.file.Files.readString(java.nio.file.Path.of(a[1]))),
                        dag)
                : TbsProbe.logged(dag, false);
        PrimFunc whole = Lowering.lower("tbs", sched);
        if (given) System.out.println(whole);
        String[][] arms = {
            {}, {"query_T"}, {"value_T"}, {"value_T.local"}, {"scores"}, {"softmax_max"}, {"softmax_exp"},
            {"softmax_sum.rf", "softmax_sum"}, {"softmax"},
            {"softmax_max", "softmax_exp", "softmax_sum.rf", "softmax_sum", "softmax"}
        };
        List<CompiledKernel> ks = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        for (String[] arm : arms) {
            ks.add(Backend.forTarget(target).compile(knock(whole, Set.of(arm)), target));
            labels.add("without " + String.join(",", arm));
        }
        ks.add(Backend.forTarget(target).compile(noExp(whole), target));
        labels.add("exp replaced by its argument");
        NDArray[] args = arguments(dag);
        if (!given) {
            PrimFunc rows = Lowering.lower("tbs", TbsProbe.logged(dag, false, "k.1"));
            if (a.length > 1) System.out.println(rows);
            ks.add(Backend.forTarget(target).compile(rows, target));
            labels.add("max, exp and sums per row");
            for (int u : new int[] {2, -1, 6}) {
                ks.add(Backend.forTarget(target).compile(Lowering.lower("tbs", TbsProbe.logged(dag, false, "k.0", u)), target));
                labels.add(u < 0 ? "query_T inlined" : "max and exp rows unrolled by " + u);
            }
            for (int m = 1; m <= 4; m++) {
                TbsProbe.vmode = m;
                ks.add(Backend.forTarget(target).compile(Lowering.lower("tbs", TbsProbe.logged(dag, false)), target));
                labels.add("value_T copy mode " + m);
            }
            TbsProbe.vmode = 0;
            // the value_T variants (the last four kernels) against the whole program: same outputs
            NDArray out = args[args.length - 1];
            ks.get(0).call(args);
            NDArray want = NDArray.allocate(out.dtype(), out.shape());
            for (long j = 0; j < out.numElements(); j++) want.setDoubleFlat(out.getDoubleFlat(j), j);
            for (int m = 1; m <= 4; m++) {
                ks.get(ks.size() - 5 + m).call(args);
                out.assertClose(want, 1e-6, 1e-7);
            }
            System.out.println("value_T variants: outputs agree with the whole program's");
        }
        double[] best = new double[ks.size()];
        Arrays.fill(best, Double.MAX_VALUE);
        for (int p = 0; p < passes; p++)
            for (int v = 0; v < ks.size(); v++) best[v] = Math.min(best[v], TbsProbe.time(ks.get(v), args));
        for (int v = 0; v < ks.size(); v++)
            System.out.printf(Locale.ROOT, "%-78s %8.4f ms  (%+.4f)%n", labels.get(v), best[v] * 1e3,
                    (best[0] - best[v]) * 1e3);
        System.out.println("load after: " + Timing.loadAverage());
    }
}
