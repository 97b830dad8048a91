package dev.kiln.bench.network;

import dev.kiln.bench.network.TorchNetwork.Format;
import dev.kiln.graph.Graph;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptional;
import org.bytedeco.pytorch.global.torch;

/**
 * The slots of a {@link TorchNetwork}'s run: which entry of the run's tensor array holds each graph value in which
 * {@link Form}, and the steps that fill the entries in order. A value is converted to another form, and a constant is
 * put in a slot, by a step added the first time a translated op asks for it.
 */
final class TorchSlots {

    /**
     * How a value's tensor relates to the Kiln value: as it is, or (4-D) NHWC held as NCHW (t = v.permute(0, 3, 1, 2)).
     */
    enum Form {
        LOGICAL,
        NCHW
    }

    /** One step of a run: fills a slot from earlier ones (or from a constant). */
    interface Step {
        void run(Tensor[] slots);
    }

    private static final long[] TO_NHWC = {0, 2, 3, 1};

    private final Graph graph;
    private final Format format;
    private final TorchConstants constants;
    private final List<Step> steps = new ArrayList<>();
    private final Map<String, Integer> slotOf = new HashMap<>(); // "value|FORM" -> slot
    private final Map<String, Form> nativeForm = new HashMap<>();
    private int slotCount;

    TorchSlots(Graph graph, Format format, TorchConstants constants) {
        this.graph = graph;
        this.format = format;
        this.constants = constants;
    }

    /** The slot of graph input {@code v}, held as it is. */
    int input(String v) {
        int s = newSlot(v, Form.LOGICAL);
        nativeForm.put(v, Form.LOGICAL);
        return s;
    }

    /** Appends a step. */
    void add(Step step) {
        steps.add(step);
    }

    /** Runs every step in order on {@code slots} (of {@link #count()} entries, the inputs' filled). */
    void run(Tensor[] slots) {
        for (Step s : steps) s.run(slots);
    }

    /** The number of slots. */
    int count() {
        return slotCount;
    }

    /** The number of steps. */
    int steps() {
        return steps.size();
    }

    /** Whether runtime value {@code v} is held in one slot only, its own form's (no conversion of it was made). */
    boolean heldOnce(String v) {
        return slotOf.containsKey(v + "|" + nativeForm.get(v))
                && slotOf.keySet().stream().filter(k -> k.startsWith(v + "|")).count() == 1;
    }

    /** Whether runtime value {@code v} is held in form {@code f} (computed so, or converted already). */
    boolean has(String v, Form f) {
        return !graph.isConstant(v) && (nativeForm.get(v) == f || slotOf.containsKey(v + "|" + f));
    }

    /** The form {@code v} was computed in ({@link Form#LOGICAL} for a value not computed by a step). */
    Form formOf(String v) {
        Form f = nativeForm.get(v);
        return f == null ? Form.LOGICAL : f;
    }

    /** A new slot for {@code v} in form {@code f}; with {@code f} null, one that no lookup finds. */
    int newSlot(String v, Form f) {
        int s = slotCount++;
        if (f != null) slotOf.put(v + "|" + f, s);
        return s;
    }

    /** Adds the step that computes {@code v} in form {@code f} into a new slot. */
    void emit(String v, Form f, Function<Tensor[], Tensor> op) {
        int s = newSlot(v, f);
        nativeForm.put(v, f);
        steps.add(t -> t[s] = op.apply(t));
    }

    /** The slot holding runtime value {@code v} in form {@code f}, adding the conversion step if needed. */
    int slot(String v, Form f) {
        if (graph.isConstant(v)) {
            int s = newSlot(v + "#const" + slotCount, null);
            Tensor c = constants.inForm(v, f == Form.NCHW);
            steps.add(t -> t[s] = c);
            return s;
        }
        Integer s = slotOf.get(v + "|" + f);
        if (s != null) return s;
        Form from = nativeForm.get(v);
        if (from == null) throw new KilnException("TorchNetwork: value '" + v + "' is used before it is computed");
        int src = slotOf.get(v + "|" + from);
        int dst = newSlot(v, f);
        if (f == Form.NCHW) {
            if (format == Format.CHANNELS_LAST) {
                steps.add(t ->
                        t[dst] = t[src].permute(TorchConstants.TO_NCHW).contiguous(torch.MemoryFormat.ChannelsLast));
            } else {
                steps.add(t -> t[dst] = t[src].permute(TorchConstants.TO_NCHW).contiguous());
            }
        } else {
            steps.add(t -> t[dst] = t[src].permute(TO_NHWC));
        }
        return dst;
    }

    /**
     * A slot for an operand of a broadcasting op in form {@code f}: runtime values converted, constants converted once.
     */
    int operandSlot(String v, Form f) {
        int r = graph.value(v).shape().size();
        if (f == Form.LOGICAL || !graph.isConstant(v) && r == 4) return slot(v, f);
        if (graph.isConstant(v)) {
            Tensor c = constants.inForm(v, f == Form.NCHW);
            int s = newSlot(v + "#const" + slotCount, null);
            steps.add(t -> t[s] = c);
            return s;
        }
        // a runtime value of lower rank broadcast against NCHW-held NHWC: pad to rank 4, then permute
        int src = slot(v, Form.LOGICAL);
        long[] dims = TorchConstants.rank4(graph.value(v).dims());
        int dst = newSlot(v + "#b" + slotCount, null);
        steps.add(t -> t[dst] = t[src].reshape(dims).permute(TorchConstants.TO_NCHW));
        return dst;
    }

    /** A slot holding constant {@code v} reshaped to {@code view} (for a channel vector broadcast along one axis). */
    int operand(String v, long[] view) {
        if (graph.isConstant(v)) {
            Tensor c = constants.asIs(v).reshape(view);
            constants.hold(c);
            int s = newSlot(v + "#const" + slotCount, null);
            steps.add(t -> t[s] = c);
            return s;
        }
        int src = slot(v, Form.LOGICAL);
        int dst = newSlot(v + "#v" + slotCount, null);
        steps.add(t -> t[dst] = t[src].reshape(view));
        return dst;
    }

    TensorOptional optionalOperand(String v, long[] shape) {
        if (!graph.isConstant(v))
            throw new KilnException("TorchNetwork: layer_norm's gamma and beta must be constants, '" + v + "' is not");
        Tensor c = constants.asIs(v).reshape(shape);
        constants.hold(c);
        return constants.keep(new TensorOptional(c));
    }

    void requireVector(String v, long c) {
        if (graph.value(v).numElements() != c) {
            throw new KilnException("TorchNetwork: batch norm statistic '" + v + "' has "
                    + graph.value(v).numElements() + " elements, expected " + c);
        }
    }
}
