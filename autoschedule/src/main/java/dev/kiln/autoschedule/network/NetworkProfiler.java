package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.autoschedule.measure.Warmup;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.WorkerPool;
import java.util.ArrayList;
import java.util.List;

/**
 * Times a {@link CompiledNetwork} for {@link CompiledNetwork#profile} and
 * {@link CompiledNetwork#compareHold}. Every measurement alternates its kinds of run, so a change in
 * the machine's speed during it (a neighbour, the clock) shifts all kinds alike.
 */
final class NetworkProfiler {
    private NetworkProfiler() {}

    static NetworkProfile profile(CompiledNetwork cn, int warmup, int runs, NDArray[] inputs) {
        if (runs < 1) throw new KilnException("profile: runs must be at least 1, got " + runs);
        if (warmup < 0) throw new KilnException("profile: warmup must not be negative, got " + warmup);
        List<CompiledNetwork.Call> calls = cn.calls();
        NDArray[] outs = cn.ownOutputs();
        for (int i = 0; i < warmup; i++) cn.runInto(inputs, outs);
        Warmup.Outcome settled = Warmup.run(() -> cn.runInto(inputs, outs), CompiledNetwork.PROFILE_WARMUP_MS);
        ReferenceExecutor.checkInputs(cn.graph(), inputs);
        WorkerPool pool = cn.workerPool();
        double[] plain = new double[runs];
        double[][] perCall = new double[calls.size()][runs];
        double[][] again = new double[calls.size()][runs];
        double[] inKernels = new double[runs];
        long sleeps = 0;
        for (int r = 0; r < runs; r++) {
            long s0 = pool.sleeps();
            long p0 = System.nanoTime();
            cn.runInto(inputs, outs);
            plain[r] = (System.nanoTime() - p0) / 1e9;
            sleeps += pool.sleeps() - s0;
            boolean hold = cn.holdWorkers();
            if (hold) pool.hold();
            try {
                for (int c = 0; c < calls.size(); c++) { // each call timed, as the network makes it
                    CompiledNetwork.Call call = calls.get(c);
                    NDArray[] args = call.bind(inputs, outs);
                    long t0 = System.nanoTime();
                    call.kernel().call(args);
                    perCall[c][r] = (System.nanoTime() - t0) / 1e9;
                    inKernels[r] += perCall[c][r];
                }
                for (int c = 0; c < calls.size(); c++) { // each call made twice, the second timed
                    CompiledNetwork.Call call = calls.get(c);
                    NDArray[] args = call.bind(inputs, outs);
                    call.kernel().call(args);
                    long t0 = System.nanoTime();
                    call.kernel().call(args);
                    again[c][r] = (System.nanoTime() - t0) / 1e9;
                }
            } finally {
                if (hold) pool.release();
            }
        }
        List<NetworkProfile.Entry> entries = new ArrayList<>();
        for (int c = 0; c < calls.size(); c++) {
            CompiledNetwork.Call call = calls.get(c);
            entries.add(new NetworkProfile.Entry(
                    call.group().id(),
                    call.group().description(),
                    call.task().id(),
                    NetworkProfile.median(perCall[c]),
                    call.task().flops(),
                    call.task().task().dag().hasFloatArithmetic(),
                    NetworkProfile.min(perCall[c]),
                    NetworkProfile.median(again[c]),
                    cn.tunedSeconds(call.task())));
        }
        CallTimer.Stats plainRuns = new CallTimer.Stats(plain, settled);
        return new NetworkProfile(
                plainRuns.median(),
                NetworkProfile.median(inKernels),
                entries,
                plainRuns.p10(),
                plainRuns.p90(),
                pool.sleeps() < 0 ? Double.NaN : (double) sleeps / runs,
                cn.holdWorkers());
    }

    static HoldComparison compareHold(CompiledNetwork cn, int warmup, int runs, NDArray[] inputs) {
        if (runs < 1) throw new KilnException("compareHold: runs must be at least 1, got " + runs);
        if (warmup < 0) throw new KilnException("compareHold: warmup must not be negative, got " + warmup);
        boolean before = cn.holdWorkers();
        NDArray[] outs = cn.ownOutputs();
        WorkerPool pool = cn.workerPool();
        double[][] times = new double[2][runs];
        long[] sleeps = new long[2];
        try {
            for (int i = 0; i < warmup; i++) {
                for (int k = 0; k < 2; k++) {
                    cn.holdWorkers(k == 0);
                    cn.runInto(inputs, outs);
                }
            }
            for (int r = 0; r < runs; r++) {
                for (int j = 0; j < 2; j++) {
                    int k = (r + j) % 2; // ABBA...: neither kind always runs first
                    cn.holdWorkers(k == 0);
                    long s0 = pool.sleeps();
                    long t0 = System.nanoTime();
                    cn.runInto(inputs, outs);
                    times[k][r] = (System.nanoTime() - t0) / 1e9;
                    sleeps[k] += pool.sleeps() - s0;
                }
            }
        } finally {
            cn.holdWorkers(before);
        }
        boolean counted = pool.sleeps() >= 0;
        return new HoldComparison(
                new CallTimer.Stats(times[0], null),
                new CallTimer.Stats(times[1], null),
                counted ? (double) sleeps[0] / runs : Double.NaN,
                counted ? (double) sleeps[1] / runs : Double.NaN);
    }

    static VariantComparison compare(
            CompiledNetwork cn, int warmup, int runs, NDArray[] inputs, List<CompiledNetwork.Variant> variants) {
        if (runs < 2) throw new KilnException("compare: runs must be at least 2, got " + runs);
        if (warmup < 0) throw new KilnException("compare: warmup must not be negative, got " + warmup);
        if (variants.isEmpty()) throw new KilnException("compare: no variants");
        int n = variants.size(), calls = cn.kernelCalls(), whole = (runs + 1) / 2, split = runs / 2;
        WorkerPool pool = cn.workerPool();
        double[][] times = new double[n][whole];
        double[][][] perCall = new double[n][calls][split];
        double[] one = new double[calls];
        long[] sleeps = new long[n];
        for (int i = 0; i < warmup; i++) for (CompiledNetwork.Variant v : variants) v.run(inputs, null);
        for (int r = 0; r < runs; r++) {
            for (int j = 0; j < n; j++) {
                int k = (r + j) % n;
                if (r % 2 == 0) {
                    long s0 = pool.sleeps();
                    long t0 = System.nanoTime();
                    variants.get(k).run(inputs, null);
                    times[k][r / 2] = (System.nanoTime() - t0) / 1e9;
                    sleeps[k] += pool.sleeps() - s0;
                } else {
                    variants.get(k).run(inputs, one);
                    for (int c = 0; c < calls; c++) perCall[k][c][r / 2] = one[c];
                }
            }
        }
        boolean counted = pool.sleeps() >= 0;
        List<VariantComparison.Row> rows = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            double minima = 0;
            double[] each = new double[calls];
            for (int c = 0; c < calls; c++) {
                CallTimer.Stats st = new CallTimer.Stats(perCall[k][c], null);
                each[c] = st.median();
                minima += st.min();
            }
            rows.add(new VariantComparison.Row(
                    variants.get(k).name(),
                    new CallTimer.Stats(times[k], null),
                    counted ? (double) sleeps[k] / whole : Double.NaN,
                    minima,
                    each));
        }
        return new VariantComparison(rows);
    }
}
