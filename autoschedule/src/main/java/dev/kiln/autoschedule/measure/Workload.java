package dev.kiln.autoschedule.measure;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.List;

/**
 * What every program of one task runs on: the arguments (inputs, then outputs), the seed the
 * inputs are drawn from, and the reference outputs the interpreter computed on them (empty when
 * correctness is not checked). Input {@code i} is {@code fillRandom(seed + i)}, so the parent
 * and the worker draw the same inputs without sending them. Owns its arrays.
 */
final class Workload implements AutoCloseable {
    /** Outputs are filled with values from this seed before the checked run, so unwritten elements show. */
    static final long POISON_SEED = 0x5eed_dead_beefL;

    private final List<ArgumentSpec> args;
    private final long seed;
    private final List<NDArray> references;
    private List<NDArray> inputs;

    Workload(List<ArgumentSpec> args, long seed, List<NDArray> references) {
        this.args = List.copyOf(args);
        this.seed = seed;
        this.references = List.copyOf(references);
        long outputs = args.stream().filter(a -> !a.input()).count();
        if (!references.isEmpty() && references.size() != outputs) {
            throw new KilnException("a workload with " + outputs + " outputs got " + references.size() + " references");
        }
    }

    List<ArgumentSpec> args() { return args; }

    long seed() { return seed; }

    /** The reference outputs, in argument order; empty when there is nothing to check against. */
    List<NDArray> references() { return references; }

    boolean hasReferences() { return !references.isEmpty(); }

    /** The inputs, drawn on first use and kept. */
    synchronized List<NDArray> inputs() {
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
                args.get(i).check(params.get(i), i);
                out[i] = NDArray.allocate(params.get(i));
                if (args.get(i).input()) out[i].copyFrom(inputs().get(input++));
                else out[i].fillRandom(POISON_SEED + i);
            }
            return out;
        } catch (RuntimeException e) {
            for (NDArray a : out) if (a != null) a.close();
            throw e;
        }
    }

    @Override
    public synchronized void close() {
        references.forEach(NDArray::close);
        if (inputs != null) inputs.forEach(NDArray::close);
    }
}
