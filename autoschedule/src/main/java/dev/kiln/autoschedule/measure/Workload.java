package dev.kiln.autoschedule.measure;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.layout.PackedLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What every program of one task runs on: the arguments (inputs, then outputs), the seed the
 * inputs are drawn from, and the reference outputs the interpreter computed on them (empty when
 * correctness is not checked). Input {@code i} is {@code fillRandom(seed + i)}, so the parent
 * and the worker draw the same inputs without sending them. Owns its arrays.
 *
 * <p>A program of a task with layout-free arguments reads some inputs packed
 * ({@link PackedLayout}); {@link #packed} gives the view of the workload that hands it those
 * inputs packed, from the same values, so the reference (computed on the original layout) still
 * checks it.
 *
 * <p>With {@code -Dkiln.measure.placement=random} every {@link #allocate} puts each plain argument at a random
 * offset of 0-64 KiB (in steps of 64 bytes) past an aligned block, so that each measurement of a program, and
 * each re-measurement of the best ones, draws another placement of its arrays relative to the caches' sets and
 * the 4 KiB pages; without it, same-size arrays allocated and freed per program tend to land where the last
 * ones were, and a program measured again gets the same placement again (docs/PERFORMANCE.md, "Why the network
 * does not follow the estimate"). Off by default until an A/B shows what it does to the search.
 */
final class Workload implements AutoCloseable {
    /** The system property that turns random argument placement on ({@code random}). */
    static final String PLACEMENT_PROPERTY = "kiln.measure.placement";

    private static final int PLACEMENT_STEPS = 1024; // 1024 x 64 bytes: up to 64 KiB past the block's start
    /** Outputs are filled with values from this seed before the checked run, so unwritten elements show. */
    static final long POISON_SEED = 0x5eed_dead_beefL;

    private final List<ArgumentSpec> args;
    private final long seed;
    private final List<NDArray> references;
    private List<NDArray> inputs;
    /** Packed layouts by argument position (empty for the workload itself). */
    private final Map<Integer, PackedLayout> layouts;
    /** The workload this is a packed view of, which owns the arrays; null for the workload itself. */
    private final Workload owner;
    /** Draws each argument's offset when placement is random; null when it is not. */
    private final java.util.SplittableRandom placement;

    Workload(List<ArgumentSpec> args, long seed, List<NDArray> references) {
        this(args, seed, references, Map.of(), null);
    }

    private Workload(
            List<ArgumentSpec> args,
            long seed,
            List<NDArray> references,
            Map<Integer, PackedLayout> layouts,
            Workload owner) {
        this.args = List.copyOf(args);
        this.seed = seed;
        this.references = List.copyOf(references);
        this.layouts = Map.copyOf(layouts);
        this.owner = owner;
        this.placement = "random".equals(System.getProperty(PLACEMENT_PROPERTY))
                ? new java.util.SplittableRandom(seed ^ System.nanoTime())
                : null;
        long outputs = args.stream().filter(a -> !a.input()).count();
        if (!references.isEmpty() && references.size() != outputs) {
            throw new KilnException("a workload with " + outputs + " outputs got " + references.size() + " references");
        }
    }

    List<ArgumentSpec> args() {
        return args;
    }

    long seed() {
        return seed;
    }

    /** The reference outputs, in argument order; empty when there is nothing to check against. */
    List<NDArray> references() {
        return references;
    }

    boolean hasReferences() {
        return !references.isEmpty();
    }

    /**
     * This workload as a program reads it whose arguments at the keys of {@code layouts} are packed:
     * {@link #allocate} packs those inputs. The view shares this workload's arrays and closing it
     * does nothing. An empty map gives this workload.
     */
    Workload packed(Map<Integer, PackedLayout> layouts) {
        if (layouts.isEmpty()) return this;
        Workload root = owner != null ? owner : this;
        for (var e : layouts.entrySet()) {
            int a = e.getKey();
            if (a < 0 || a >= args.size() || !args.get(a).input()) {
                throw new KilnException(
                        "a packed layout for argument " + a + ", which is not an input of the task: " + args);
            }
            if (!Arrays.equals(e.getValue().originalShape(), args.get(a).shape())) {
                throw new KilnException("the packed layout of argument " + a + " '"
                        + args.get(a).name() + "' is for shape "
                        + Arrays.toString(e.getValue().originalShape()) + ", the argument is "
                        + Arrays.toString(args.get(a).shape()));
            }
        }
        return new Workload(args, seed, references, layouts, root);
    }

    /** The inputs, drawn on first use and kept. */
    synchronized List<NDArray> inputs() {
        if (owner != null) return owner.inputs();
        if (inputs == null) {
            List<NDArray> in = new ArrayList<>();
            for (int i = 0; i < args.size(); i++) {
                ArgumentSpec a = args.get(i);
                if (a.input()) in.add(NDArray.allocate(a.dtype(), a.shape()).fillRandom(seed + i));
            }
            inputs = List.copyOf(in);
        }
        return inputs;
    }

    /**
     * Fresh arrays for {@code params} (the measured program's parameters, checked against the
     * arguments): inputs copied from {@link #inputs()}, outputs poisoned.
     */
    NDArray[] allocate(List<Buffer> params) {
        if (params.size() != args.size()) {
            throw new KilnException("the measured program takes " + params.size() + " parameters, the task has "
                    + args.size() + " arguments: " + args);
        }
        NDArray[] out = new NDArray[params.size()];
        try {
            int input = 0;
            for (int i = 0; i < params.size(); i++) {
                PackedLayout layout = layouts.get(i);
                if (layout != null) {
                    args.get(i).checkPacked(params.get(i), i, layout.newShape());
                    out[i] = layout.apply(inputs().get(input++));
                    continue;
                }
                args.get(i).check(params.get(i), i);
                out[i] = placement == null
                        ? NDArray.allocate(params.get(i))
                        : NDArray.allocateOffset(params.get(i), NDArray.ALIGNMENT * nextStep());
                if (args.get(i).input()) out[i].copyFrom(inputs().get(input++));
                else out[i].fillRandom(POISON_SEED + i);
            }
            return out;
        } catch (RuntimeException e) {
            for (NDArray a : out) if (a != null) a.close();
            throw e;
        }
    }

    private synchronized int nextStep() {
        return placement.nextInt(PLACEMENT_STEPS);
    }

    @Override
    public synchronized void close() {
        if (owner != null) return;
        references.forEach(NDArray::close);
        if (inputs != null) inputs.forEach(NDArray::close);
    }
}
