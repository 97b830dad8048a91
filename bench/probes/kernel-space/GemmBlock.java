package dev.kiln.bench.space;

import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.*;
import java.util.*;

/**
 * GEMM 1024 with B's packed copy row-major or stored as panels of the register tile's width ({@code storageBlock}),
 * over K-blocked level-1 shapes; see README.md. {@code java ... GemmBlock CORES PASSES [DUMP-DIR]}.
 */
public final class GemmBlock {
    static Schedule shape(ComputeDAG dag, int[] i, int[] j, int k1, boolean packA, boolean kBlock, boolean blockB, boolean blockA) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        local.split("i", i[0], i[1], i[2]);
        local.split("j", j[0], j[1], j[2]);
        local.split("k", k1);
        if (kBlock) local.reorder("i.0", "j.0", "k.0", "i.1", "j.1", "i.2", "j.2", "k.1", "i.3", "j.3");
        else local.reorder("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3");
        c.split("i", i[0] * i[1] * i[2]);
        c.split("j", j[0] * j[1] * j[2]);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        c.parallel(c.fuse("i.0", "j.0"));
        c.vectorize("j.1");
        local.autoUnrollMaxStep("i.0", 16);
        local.vectorize("j.3");
        for (String t : packA ? new String[] {"B", "A"} : new String[] {"B"}) {
            String at = t.equals("A") && kBlock ? "i.1" : "k.0";
            var copy = s.stage(t).cacheRead("local", local).computeAt(local, at);
            if (t.equals("B") && blockB) {
                copy.storageBlock(1, 0);
                copy.split("ax1", j[2]);
                copy.vectorize("ax1.1");
            } else if (t.equals("A") && blockA) {
                copy.storageBlock(0, 0);
                copy.split("ax0", i[2]);
                copy.reorder("ax0.0", "ax1", "ax0.1");
                copy.vectorize("ax0.1");
            } else copy.vectorize(copy.loops().getLast());
        }
        return s.build();
    }

    public static void main(String[] args) throws Exception {
        int cores = Integer.parseInt(args[0]);
        int passes = Integer.parseInt(args[1]);
        String dump = args.length > 2 ? args[2] : null;
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true).withCores(cores);
        System.out.println("target cores " + cores + " load before: " + Timing.loadAverage());
        ComputeDAG dag = GemmStudy.gemm(1024);
        double flops = dag.flopCount();
        List<String> names = new ArrayList<>();
        List<Schedule> ss = new ArrayList<>();
        int[][][] tiles = {
            {{64,1,8},{16,1,32}}, {{32,1,8},{8,1,32}}, {{128,1,8},{8,1,32}}, {{32,1,8},{32,1,32}}, {{86,1,12},{16,1,32}},
        };
        for (int[][] t : tiles) {
            for (int k1 : new int[] {256, 512, 1024}) {
                String tn = Arrays.toString(t[0]) + Arrays.toString(t[1]) + " k" + k1;
                for (int v = 0; v < 2; v++) {
                    if (v == 0 && t[1][0] == 32) continue;
                    names.add(tn + (v == 1 ? " blockB" : ""));
                    ss.add(shape(dag, t[0], t[1], k1, false, true, v == 1, false));
                }
            }
        }
        List<CompiledKernel> ks = new ArrayList<>();
        for (int q = 0; q < ss.size(); q++) {
            var f = Lowering.lower("gemm", ss.get(q));
            ks.add(Backend.forTarget(target).compile(f, target));
            if (dump != null) {
                Files.createDirectories(Path.of(dump));
                String tag = names.get(q).replaceAll("[^a-zA-Z0-9]+", "_");
                Files.writeString(Path.of(dump, tag + ".tir"), f.toString());
                Files.writeString(Path.of(dump, tag + ".s"), ks.get(q).source());
            }
        }
        float[] ref = null;
        for (int q = 0; q < ks.size(); q++) {
            var a = dev.kiln.runtime.NDArray.random(dev.kiln.ir.DType.FLOAT32, 1, 1024, 1024);
            var b = dev.kiln.runtime.NDArray.random(dev.kiln.ir.DType.FLOAT32, 2, 1024, 1024);
            var c = dev.kiln.runtime.NDArray.allocate(dev.kiln.ir.DType.FLOAT32, 1024, 1024);
            ks.get(q).call(a, b, c);
            float[] out = c.toFloatArray();
            if (ref == null) {
                ref = new float[1024 * 1024];
                float[] x = a.toFloatArray(), y = b.toFloatArray();
                for (int r = 0; r < 1024; r++) for (int kk = 0; kk < 1024; kk++) {
                    float xv = x[r * 1024 + kk];
                    for (int col = 0; col < 1024; col++) ref[r * 1024 + col] += xv * y[kk * 1024 + col];
                }
            }
            double md = 0;
            for (int e = 0; e < out.length; e++) md = Math.max(md, Math.abs(out[e] - ref[e]));
            System.out.println("check " + names.get(q) + " max abs diff " + md);
            a.close(); b.close(); c.close();
        }
        double[] best = new double[ss.size() + 1];
        Arrays.fill(best, Double.MAX_VALUE);
        for (int p = 0; p < passes; p++) {
            best[ss.size()] = Math.min(best[ss.size()], Timing.openBlas(1024, cores));
            for (int q = 0; q < ss.size(); q++) best[q] = Math.min(best[q], Timing.time(ks.get(q), dag));
        }
        GemmStudy.row("OpenBLAS", best[ss.size()], flops);
        for (int q = 0; q < ss.size(); q++) GemmStudy.row(names.get(q), best[q], flops);
        System.out.println("load after: " + Timing.loadAverage());
    }
}
