package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.graph.Graph;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.target.WorkerPool;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A network compiled for a target: one kernel call per fused group, in order, over memory planned
 * once ({@link MemoryPlan}: intermediate values share one arena by liveness) and weights prepared
 * once (laid out for the tuned kernels where their schedules asked for it). A run binds the caller's
 * inputs (checked like a kernel's arguments), calls the kernels, and writes the outputs: nothing is
 * allocated per run by {@link #run(NDArray[], NDArray[])}. The kernels' parallel loops share the
 * backend's one thread pool, whose threads a run holds awake from its first kernel to its last
 * ({@link #holdWorkers}), so back-to-back kernels pay no thread wake-up between them.
 *
 * <p>Not thread-safe: one run at a time (the intermediate memory is the network's own).
 */
public final class CompiledNetwork implements AutoCloseable {
    /** A kernel call: the kernel, its argument arrays, and which of them are bound per run. */
    record Call(
            FusedGroup group,
            NetworkTask task,
            CompiledKernel kernel,
            NDArray[] args,
            int[] inputIndex,
            int[] outputIndex) {
        /** The argument array with this run's inputs and outputs put in their slots. */
        NDArray[] bind(NDArray[] inputs, NDArray[] outputs) {
            for (int i = 0; i < args.length; i++) {
                if (inputIndex[i] >= 0) args[i] = inputs[inputIndex[i]];
                else if (outputIndex[i] >= 0) args[i] = outputs[outputIndex[i]];
            }
            return args;
        }
    }

    private final Graph graph;
    private final Partition partition;
    private final List<NetworkTask> tasks;
    private final List<CompiledKernel> kernels;
    private final List<Call> calls;
    private final MemoryPlan plan;
    private final Arena arena;
    private final NDArray[] ownOutputs;
    private final Target target;
    private final List<String> notes;
    private final WorkerPool pool;
    private final double[] tunedSeconds;
    private volatile boolean holdWorkers = true;
    private boolean closed;
    private SchedulerResult tuning;

    CompiledNetwork(
            Graph graph,
            Partition partition,
            List<NetworkTask> tasks,
            List<CompiledKernel> kernels,
            List<Call> calls,
            MemoryPlan plan,
            Arena arena,
            NDArray[] ownOutputs,
            Target target,
            List<String> notes,
            WorkerPool pool,
            double[] tunedSeconds) {
        this.graph = graph;
        this.partition = partition;
        this.tasks = List.copyOf(tasks);
        this.kernels = List.copyOf(kernels);
        this.calls = List.copyOf(calls);
        this.plan = plan;
        this.arena = arena;
        this.ownOutputs = ownOutputs;
        this.target = target;
        this.notes = List.copyOf(notes);
        this.pool = pool;
        this.tunedSeconds = tunedSeconds.clone();
    }

    /**
     * Runs the network on {@code inputs} (in the order of the graph's inputs) and returns a copy of its first output.
     */
    public NDArray run(NDArray... inputs) {
        runInto(inputs, ownOutputs);
        return ownOutputs[0].copy();
    }

    /** Runs the network and returns copies of all its outputs, in order. */
    public List<NDArray> runAll(NDArray... inputs) {
        runInto(inputs, ownOutputs);
        List<NDArray> out = new ArrayList<>();
        for (NDArray a : ownOutputs) out.add(a.copy());
        return out;
    }

    /**
     * Runs the network writing its outputs into {@code outputs} (shapes and dtypes of the graph's outputs); allocates
     * nothing.
     */
    public void run(NDArray[] inputs, NDArray[] outputs) {
        if (outputs.length != ownOutputs.length) {
            throw new KilnException("network '" + graph.name() + "' has " + ownOutputs.length + " output(s), got "
                    + outputs.length + " array(s)");
        }
        for (int i = 0; i < outputs.length; i++) {
            Value v = graph.outputValues().get(i);
            if (outputs[i] == null || outputs[i].dtype() != v.dtype() || !Arrays.equals(outputs[i].shape(), v.dims())) {
                throw new KilnException("network '" + graph.name() + "': output " + i + " '" + v.name() + "' must be "
                        + v.dtype() + " " + v.shape() + ", got " + outputs[i]);
            }
        }
        runInto(inputs, outputs);
    }

    void runInto(NDArray[] inputs, NDArray[] outputs) {
        runCalls(calls, inputs, outputs, null);
    }

    /** Runs {@code cs}; with {@code perCall} non-null, puts each call's time in it (seconds). */
    private void runCalls(List<Call> cs, NDArray[] inputs, NDArray[] outputs, double[] perCall) {
        if (closed) throw new KilnException("network '" + graph.name() + "' is closed");
        ReferenceExecutor.checkInputs(graph, inputs);
        boolean hold = holdWorkers;
        if (hold) pool.hold();
        try {
            if (perCall == null) {
                for (Call c : cs) c.kernel().call(c.bind(inputs, outputs));
            } else {
                for (int i = 0; i < cs.size(); i++) {
                    Call c = cs.get(i);
                    NDArray[] args = c.bind(inputs, outputs);
                    long t0 = System.nanoTime();
                    c.kernel().call(args);
                    perCall[i] = (System.nanoTime() - t0) / 1e9;
                }
            }
        } finally {
            if (hold) pool.release();
        }
    }

    /**
     * A way to run this network, for {@link #compare}: the same kernels, in the same order, with
     * something changed around them (the memory plan, the parallel runtime's settings).
     */
    public interface Variant {
        String name();

        /**
         * One run into the network's own output buffers; with {@code perCall} non-null (one entry per
         * kernel call), each call's time in seconds goes into it.
         */
        void run(NDArray[] inputs, double[] perCall);

        /** The same runs under another name (to tell two networks' variants apart in a comparison). */
        default Variant named(String name) {
            return of(name, this::run);
        }

        /** A variant named {@code name} whose runs are {@code run}'s. */
        static Variant of(String name, java.util.function.BiConsumer<NDArray[], double[]> run) {
            return new Variant() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public void run(NDArray[] inputs, double[] perCall) {
                    run.accept(inputs, perCall);
                }
            };
        }
    }

    /** This network as built. */
    public Variant asBuilt() {
        String name = "as built (memory " + plan.reuse() + ")";
        return variant(name, calls);
    }

    /**
     * The same kernels over a second arena planned with {@code reuse}, allocated now and freed with
     * the network: the weights and the caller's inputs and outputs are shared with the network.
     */
    public Variant withMemoryPlan(MemoryPlan.Reuse reuse) {
        if (closed) throw new KilnException("network '" + graph.name() + "' is closed");
        MemoryPlan other = MemoryPlan.plan(partition, reuse);
        MemorySegment mem = arena.allocate(Math.max(other.totalBytes(), MemoryPlan.ALIGNMENT), MemoryPlan.ALIGNMENT);
        java.util.Map<String, NDArray> views = new java.util.HashMap<>();
        List<Call> cs = new ArrayList<>();
        for (Call c : calls) {
            NDArray[] args = c.args().clone();
            List<String> names = c.group().dag().arguments();
            for (int a = 0; a < args.length; a++) {
                String v = names.get(a);
                if (c.inputIndex()[a] >= 0 || c.outputIndex()[a] >= 0 || graph.isConstant(v)) continue;
                Long off = other.offsets().get(v);
                if (off == null) throw new IllegalStateException("value '" + v + "' has no memory");
                args[a] = views.computeIfAbsent(v, x -> view(mem, off, graph.value(x)));
            }
            cs.add(new Call(c.group(), c.task(), c.kernel(), args, c.inputIndex(), c.outputIndex()));
        }
        return variant(String.format(Locale.ROOT, "memory %s (%.1f MB arena)", reuse, other.totalBytes() / 1e6), cs);
    }

    private Variant variant(String name, List<Call> cs) {
        return Variant.of(name, (inputs, perCall) -> runCalls(cs, inputs, ownOutputs, perCall));
    }

    /**
     * A same-process comparison of ways to run this network: {@code runs} runs of each, in rotating
     * order (run {@code r} starts with variant {@code r mod n}), after {@code warmup} rounds of each.
     * Each kind is timed whole in half of its runs and call by call in the other half: the sums of
     * each call's median and minimum are steadier than whole runs on a loaded machine.
     */
    public VariantComparison compare(int warmup, int runs, NDArray[] inputs, List<Variant> variants) {
        return NetworkProfiler.compare(this, warmup, runs, inputs, variants);
    }

    /** The longest warm-up by time of {@link #profile}, after its warm-up runs, in milliseconds. */
    public static final double PROFILE_WARMUP_MS = 500;

    /**
     * Times {@code runs} runs three ways, as a user runs the network (back to back, after
     * {@code warmup} runs and a warm-up by time of at most {@link #PROFILE_WARMUP_MS} that stops
     * once the times settle): plain runs; runs that time each kernel call, to tell the time spent
     * in the kernels from the time spent around them (argument binding and checks, the loop); and
     * runs that make each call twice and time the second, its data and code then warm. The kinds
     * alternate, so a change in the machine's speed during the profile (a neighbour, the clock)
     * shifts all alike instead of showing up as time outside the kernels. Medians over the runs,
     * with the p10-p90 spread of the plain runs, each call's tuned time ({@link #tunedSeconds})
     * and the thread pool's sleeps per run: {@link NetworkProfile#degradation} puts them side by side.
     */
    public NetworkProfile profile(int warmup, int runs, NDArray... inputs) {
        return NetworkProfiler.profile(this, warmup, runs, inputs);
    }

    /**
     * A same-process A/B: {@code runs} runs with the thread pool held awake across the run
     * ({@link #holdWorkers}, the default) and {@code runs} without, alternating, after {@code warmup}
     * runs of each. Leaves {@link #holdWorkers} as it was.
     */
    public HoldComparison compareHold(int warmup, int runs, NDArray... inputs) {
        return NetworkProfiler.compareHold(this, warmup, runs, inputs);
    }

    /**
     * Whether a run holds the backend's parallel runtime awake from its first kernel to its last
     * ({@link WorkerPool#hold}): its waiting threads poll for the next loop instead of sleeping, as
     * ONNX Runtime's threads spin while a session runs. On by default; off, threads that wait longer
     * than the runtime's spin sleep and are woken by the next parallel loop.
     */
    public void holdWorkers(boolean hold) {
        holdWorkers = hold;
    }

    public boolean holdWorkers() {
        return holdWorkers;
    }

    /**
     * The time {@code task}'s program took when it was tuned (its cost in the tuning log, or in the
     * search that made this network), in seconds; NaN for a network built without tuning.
     */
    public double tunedSeconds(NetworkTask task) {
        return tunedSeconds[task.id()];
    }

    List<Call> calls() {
        return calls;
    }

    NDArray[] ownOutputs() {
        return ownOutputs;
    }

    WorkerPool workerPool() {
        return pool;
    }

    /** The graph as compiled (after the graph passes). */
    public Graph graph() {
        return graph;
    }

    /** The fused groups, in execution order. */
    public Partition partition() {
        return partition;
    }

    /** The tuning tasks. */
    public List<NetworkTask> tasks() {
        return tasks;
    }

    /** The memory plan of the intermediate values. */
    public MemoryPlan memoryPlan() {
        return plan;
    }

    /** The number of kernel calls per run. */
    public int kernelCalls() {
        return calls.size();
    }

    /** One label per kernel call, in call order: its fused group's description and task, "conv2d+bias_add (task 3)". */
    public List<String> callLabels() {
        return calls.stream()
                .map(c -> c.group().description() + " (task " + c.task().id() + ")")
                .toList();
    }

    public Target target() {
        return target;
    }

    /** The task scheduler's result when the network was made by {@link Network#tune}. */
    public Optional<SchedulerResult> tuning() {
        return Optional.ofNullable(tuning);
    }

    void setTuning(SchedulerResult r) {
        tuning = r;
    }

    /** What the build decided that the user should know (untuned tasks, rewritten layouts). */
    public List<String> notes() {
        return notes;
    }

    /** A summary: groups, tasks, kernels, memory. */
    public String summary() {
        return String.format(
                Locale.ROOT,
                "network %s on %s: %d nodes, %d fused groups, %d tasks, %d kernel calls per run, "
                        + "intermediate memory %.1f MB (%.1f MB without reuse)%s",
                graph.name(),
                target,
                graph.nodes().size(),
                partition.groups().size(),
                tasks.size(),
                calls.size(),
                plan.totalBytes() / 1e6,
                plan.unplannedBytes(graph) / 1e6,
                notes.isEmpty() ? "" : "\n  " + String.join("\n  ", notes));
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        kernels.forEach(CompiledKernel::close);
        for (NDArray a : ownOutputs) a.close();
        arena.close();
    }

    /** An array over the arena at a planned offset. */
    static NDArray view(MemorySegment arena, long offset, Value v) {
        MemorySegment s = arena.asSlice(offset, Math.max(1, v.bytes()));
        return NDArray.wrap(s, v.dtype(), v.dims(), NDArray.rowMajorStrides(v.dims()));
    }
}
