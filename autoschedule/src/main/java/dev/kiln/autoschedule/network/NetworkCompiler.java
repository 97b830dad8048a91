package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.graph.Graph;
import dev.kiln.graph.Value;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a partitioned graph and one schedule per task into a {@link CompiledNetwork}: compiles each
 * task's kernel once, plans the intermediate memory, and binds every group's arguments (constants,
 * arena views, or slots filled per run with the caller's inputs and outputs). {@code tunedSeconds}
 * (by task id; null when untuned) is each task's time when it was tuned, for the profile.
 */
final class NetworkCompiler {
    private NetworkCompiler() {}

    static CompiledNetwork compile(
            Partition p,
            List<NetworkTask> tasks,
            Map<NetworkTask, Schedule> schedules,
            Target target,
            List<String> notes,
            boolean packWeights,
            double[] tunedSeconds) {
        Graph g = p.graph();
        List<CompiledKernel> kernels = new ArrayList<>();
        Map<FusedGroup, NetworkTask> taskOf = new HashMap<>();
        Map<NetworkTask, CompiledKernel> kernelOf = new HashMap<>();
        Map<NetworkTask, WeightLayouts> layouts = new HashMap<>();
        Arena arena = Arena.ofShared();
        try {
            for (NetworkTask t : tasks) {
                Schedule s = schedules.get(t);
                if (s == null) throw new KilnException("no schedule for task " + t.id() + " (" + t.description() + ")");
                // a task tuned with the layout rewrite was measured with its weights packed: build it the same way
                WeightLayouts wl = packWeights ? WeightLayouts.of(t, s) : WeightLayouts.unchanged(s);
                String kernelName =
                        "task" + t.id() + "_" + t.groups().getFirst().output();
                CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, kernelName);
                if (wl.rewritten()) notes.add("task " + t.id() + " (" + t.description() + "): " + wl.note());
                if (!wl.skippedNote().isEmpty())
                    notes.add("task " + t.id() + " (" + t.description() + "): " + wl.skippedNote());
                layouts.put(t, wl);
                kernels.add(k);
                kernelOf.put(t, k);
                for (FusedGroup gr : t.groups()) taskOf.put(gr, t);
            }
            MemoryPlan plan = MemoryPlan.plan(p);
            MemorySegment mem = arena.allocate(Math.max(plan.totalBytes(), MemoryPlan.ALIGNMENT), MemoryPlan.ALIGNMENT);
            List<Value> outs = g.outputValues();
            NDArray[] ownOutputs = new NDArray[outs.size()];
            for (int i = 0; i < ownOutputs.length; i++)
                ownOutputs[i] =
                        NDArray.allocate(outs.get(i).dtype(), outs.get(i).dims());
            Map<String, NDArray> views = new HashMap<>();
            List<CompiledNetwork.Call> calls = new ArrayList<>();
            for (FusedGroup gr : p.groups()) {
                if (MemoryPlan.isView(p, gr)) continue;
                NetworkTask t = taskOf.get(gr);
                if (t == null) throw new IllegalStateException("group " + gr.id() + " has no task");
                List<String> args = gr.dag().arguments();
                NDArray[] arrays = new NDArray[args.size()];
                int[] in = new int[args.size()];
                int[] out = new int[args.size()];
                for (int a = 0; a < args.size(); a++) {
                    String v = args.get(a);
                    in[a] = indexOfInput(g, v);
                    out[a] = g.outputs().indexOf(v);
                    if (in[a] >= 0 || out[a] >= 0) continue;
                    if (g.isConstant(v)) {
                        arrays[a] = layouts.get(t).constant(a, v, g.constant(v));
                    } else {
                        Long off = plan.offsets().get(v);
                        if (off == null) throw new IllegalStateException("value '" + v + "' has no memory");
                        arrays[a] = views.computeIfAbsent(v, x -> CompiledNetwork.view(mem, off, g.value(x)));
                    }
                }
                calls.add(new CompiledNetwork.Call(gr, t, kernelOf.get(t), arrays, in, out));
            }
            double[] tuned = new double[tasks.size()];
            java.util.Arrays.fill(tuned, Double.NaN);
            if (tunedSeconds != null) System.arraycopy(tunedSeconds, 0, tuned, 0, tuned.length);
            return new CompiledNetwork(
                    g,
                    p,
                    tasks,
                    kernels,
                    calls,
                    plan,
                    arena,
                    ownOutputs,
                    target,
                    notes,
                    Backend.forTarget(target).workerPool(target),
                    tuned);
        } catch (RuntimeException e) {
            kernels.forEach(CompiledKernel::close);
            arena.close();
            throw e;
        }
    }

    private static int indexOfInput(Graph g, String v) {
        for (int i = 0; i < g.inputs().size(); i++) if (g.inputs().get(i).name().equals(v)) return i;
        return -1;
    }
}
