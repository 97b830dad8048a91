package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link Workload} of each task, made once: the arguments of the task's default lowering and,
 * when correctness is checked, the outputs the reference {@link Interpreter} computes from the
 * seeded inputs. Keyed by the DAG's structural workload key and the seed, so every schedule of a
 * workload, in every batch, is checked against one reference.
 */
final class ReferenceCache implements AutoCloseable {
    private final Map<String, Workload> workloads = new HashMap<>();
    private final AtomicInteger computations = new AtomicInteger();

    /** The workload of {@code task}; computes it (running the interpreter if {@code withReference}) the first time. */
    synchronized Workload get(SearchTask task, long seed, boolean withReference) {
        String key = key(task, seed, withReference);
        Workload w = workloads.get(key);
        if (w == null) {
            w = compute(task, seed, withReference);
            workloads.put(key, w);
        }
        return w;
    }

    /**
     * Computes the workloads of {@code tasks} not made yet, on up to {@code threads} threads at once (each reference
     * is one serial interpreter run; a network's tasks are independent), the largest first. A task whose workload
     * cannot be made is skipped: {@link #get} computes it again when the task is measured and reports the failure
     * there, as without this call.
     */
    void prepare(List<SearchTask> tasks, long seed, boolean withReference, int threads) {
        Map<String, SearchTask> todo = new LinkedHashMap<>();
        synchronized (this) {
            for (SearchTask t : tasks) {
                String key = key(t, seed, withReference);
                if (!workloads.containsKey(key)) todo.putIfAbsent(key, t);
            }
        }
        if (todo.isEmpty()) return;
        List<Map.Entry<String, SearchTask>> order = new ArrayList<>(todo.entrySet());
        order.sort(Comparator.comparingLong(
                        (Map.Entry<String, SearchTask> e) -> e.getValue().dag().flopCount())
                .reversed());
        int n = Math.max(1, Math.min(threads, order.size()));
        ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
            Thread th = new Thread(r, "kiln-reference");
            th.setDaemon(true);
            return th;
        });
        try {
            List<Future<Workload>> made = new ArrayList<>();
            for (Map.Entry<String, SearchTask> e : order)
                made.add(pool.submit(() -> compute(e.getValue(), seed, withReference)));
            for (int i = 0; i < order.size(); i++) {
                Workload w;
                try {
                    w = made.get(i).get();
                } catch (ExecutionException e) {
                    continue; // reported by get() when the task is measured
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                synchronized (this) {
                    Workload old = workloads.putIfAbsent(order.get(i).getKey(), w);
                    if (old != null) w.close();
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** How many times a reference was computed (for tests: once per workload). */
    int computations() {
        return computations.get();
    }

    private static String key(SearchTask task, long seed, boolean withReference) {
        return task.dag().workloadKey() + "|seed=" + seed + "|reference=" + withReference;
    }

    private Workload compute(SearchTask task, long seed, boolean withReference) {
        PrimFunc reference = Measurers.referenceProgram(task);
        int nInputs = task.dag().inputs().size();
        List<ArgumentSpec> args = new ArrayList<>();
        boolean rounded = Measurers.roundsFloats(task.dag());
        for (int i = 0; i < reference.params().size(); i++)
            args.add(ArgumentSpec.of(reference.params().get(i), i < nInputs, rounded));
        if (!withReference) return new Workload(args, seed, List.of());
        computations.incrementAndGet();
        Workload noRefs = new Workload(args, seed, List.of());
        NDArray[] arrays = noRefs.allocate(reference.params());
        List<NDArray> refs = new ArrayList<>();
        try {
            Interpreter.run(reference, arrays);
            for (int i = nInputs; i < arrays.length; i++) refs.add(arrays[i].copy());
        } catch (RuntimeException e) {
            refs.forEach(NDArray::close);
            throw new KilnException("task " + task.workloadKey() + ": the interpreter cannot compute the reference "
                    + "output on the seeded inputs (seed " + seed + "): " + e.getMessage());
        } finally {
            for (NDArray a : arrays) a.close();
            noRefs.close();
        }
        return new Workload(args, seed, refs);
    }

    @Override
    public synchronized void close() {
        workloads.values().forEach(Workload::close);
        workloads.clear();
    }
}
