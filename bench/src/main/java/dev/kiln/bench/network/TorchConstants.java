package dev.kiln.bench.network;

import dev.kiln.bench.network.TorchNetwork.Format;
import dev.kiln.graph.Graph;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * The constants a {@link TorchNetwork} holds: the graph's weights copied into PyTorch tensors once,
 * in the layouts the translated calls read (conv weights OIHW, broadcast operands permuted to the
 * NCHW form of a 4-D value), each made once and freed on {@link #close()}; and the attribute
 * objects (scalars, optionals) the calls keep referring to.
 */
final class TorchConstants {
    /** NHWC -> NCHW axis order. */
    static final long[] TO_NCHW = {0, 3, 1, 2};

    private final Graph graph;
    private final Format format;
    private final List<Tensor> owned = new ArrayList<>();
    private final Map<String, Tensor> cache = new HashMap<>(); // "value|form" -> tensor
    private final List<Pointer> keepAlive = new ArrayList<>();

    /** The element type of every constant: float32, or bfloat16 for a network run in bfloat16. */
    private final torch.ScalarType type;

    TorchConstants(Graph graph, Format format) {
        this(graph, format, torch.ScalarType.Float);
    }

    TorchConstants(Graph graph, Format format, torch.ScalarType type) {
        this.graph = graph;
        this.format = format;
        this.type = type;
    }

    /**
     * A conv weight in PyTorch's layout: HWIO -> OIHW when the conv runs on NCHW (in the chosen memory format), as is
     * otherwise.
     */
    Tensor weight(String v, boolean nchw) {
        return weight(v, nchw, format);
    }

    /** The same in memory format {@code f} rather than the network's (a conv that must run in another format). */
    Tensor weight(String v, boolean nchw, Format f) {
        return cached(v + "|W|" + nchw + "|" + f, () -> {
            Tensor t = asIs(v);
            if (nchw) {
                Tensor p = t.permute(3, 2, 0, 1);
                t = hold(f == Format.CHANNELS_LAST ? p.contiguous(torch.MemoryFormat.ChannelsLast) : p.contiguous());
            }
            return t;
        });
    }

    /** Constant {@code v} as is, or in the NCHW form (lower ranks padded to 4 on the left, then permuted). */
    Tensor inForm(String v, boolean nchw) {
        return cached(v + "|" + nchw, () -> {
            Tensor t = asIs(v);
            if (nchw) {
                int r = graph.value(v).shape().size();
                Tensor p = (r == 4 ? t : t.reshape(rank4(graph.value(v).dims()))).permute(TO_NCHW);
                t = hold(
                        format == Format.CHANNELS_LAST && r == 4
                                ? p.contiguous(torch.MemoryFormat.ChannelsLast)
                                : p.contiguous());
            }
            return t;
        });
    }

    /** Constant {@code v} copied into a PyTorch tensor of the same shape. */
    Tensor asIs(String v) {
        return cached(v + "|asis", () -> {
            requireFloat(graph.value(v));
            Tensor t = TorchTensors.toTorch(graph.constant(v));
            if (type == torch.ScalarType.Float) return hold(t);
            hold(t);
            return hold(t.to(type));
        });
    }

    /** Takes a tensor made from constants, to free it on {@link #close()}. */
    Tensor hold(Tensor t) {
        owned.add(t);
        return t;
    }

    /** Keeps an attribute object reachable as long as the network (deallocated with the JVM or on GC). */
    <T extends Pointer> T keep(T p) {
        keepAlive.add(p);
        return p;
    }

    /** Frees the tensors. */
    void close() {
        for (Tensor t : owned) t.close();
        owned.clear();
        cache.clear();
    }

    /** The tensor under {@code key}, made once (not computeIfAbsent: makers call each other). */
    private Tensor cached(String key, Supplier<Tensor> make) {
        Tensor t = cache.get(key);
        if (t == null) {
            t = make.get();
            cache.put(key, t);
        }
        return t;
    }

    /** {@code dims} padded on the left with 1s to rank 4. */
    static long[] rank4(long[] dims) {
        if (dims.length > 4)
            throw new KilnException(
                    "TorchNetwork: cannot broadcast a rank-" + dims.length + " operand against a 4-D value");
        long[] r = new long[4];
        Arrays.fill(r, 1);
        System.arraycopy(dims, 0, r, 4 - dims.length, dims.length);
        return r;
    }

    static void requireFloat(Value v) {
        if (v.dtype() != DType.FLOAT32) {
            throw new KilnException("TorchNetwork supports float32 values only; '" + v.name() + "' is " + v.dtype());
        }
    }
}
