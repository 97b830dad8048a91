package dev.kiln.samples.onnx;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Runs one ONNX model three ways on the same seeded inputs: ONNX Runtime (the expected answer), Kiln's
 * reference executor on the imported graph (the interpreter, op by op), and the imported graph
 * compiled by Kiln (graph passes, fusion, default-lowered kernels through LLVM); all must agree
 * within the given float32 tolerance.
 */
final class OnnxCheck {
    private OnnxCheck() {}

    /** Imports and checks {@code m}; returns the imported graph. */
    static Graph check(ModelWriter m, Map<String, Long> dims, double rtol, double atol, boolean interpreter) {
        return check(m, dims, rtol, atol, interpreter, Map.of());
    }

    /**
     * Imports and checks {@code m}: float inputs uniform in [-1, 1), integer inputs uniform in
     * [lo, hi) from {@code intRanges} by input name (default: the whole range of 8-bit types, [0, 100)
     * for wider ones). Float outputs must agree within (rtol, atol), integer outputs exactly.
     */
    static Graph check(
            ModelWriter m,
            Map<String, Long> dims,
            double rtol,
            double atol,
            boolean interpreter,
            Map<String, long[]> intRanges) {
        return check(m.toBytes(), OnnxImporter.fromModel(m.build(), dims), rtol, atol, interpreter, intRanges, null);
    }

    /**
     * Kiln's answer on model {@code kiln} against ONNX Runtime's on model {@code ort}: two models that compute the
     * same function on the same inputs, where Kiln takes a form ({@code kiln}) that ONNX Runtime refuses.
     */
    static Graph checkAgainst(ModelWriter ort, ModelWriter kiln, Map<String, Long> dims, double rtol, double atol) {
        return check(ort.toBytes(), OnnxImporter.fromModel(kiln.build(), dims), rtol, atol, true, Map.of(), null);
    }

    /** As {@link #check}, the network built by {@code build} (a tuned one) instead of the default lowering. */
    static Graph checkBuilt(
            ModelWriter m,
            Map<String, Long> dims,
            double rtol,
            double atol,
            Map<String, long[]> intRanges,
            Function<Graph, CompiledNetwork> build) {
        return check(m.toBytes(), OnnxImporter.fromModel(m.build(), dims), rtol, atol, false, intRanges, build);
    }

    /** Checks the graph imported from a model file (ONNX Runtime reads the same file: external data next to it). */
    static Graph checkFile(Path model, Map<String, Long> dims, double rtol, double atol) {
        return check(model, OnnxImporter.load(model, dims), rtol, atol, true, Map.of(), null);
    }

    /** {@code model}: the model's bytes, or the Path of its file. */
    private static Graph check(
            Object model,
            Graph g,
            double rtol,
            double atol,
            boolean interpreter,
            Map<String, long[]> intRanges,
            Function<Graph, CompiledNetwork> build) {
        List<NDArray> inputs = new ArrayList<>();
        long seed = 7;
        for (Value v : g.inputs()) {
            if (v.dtype().isFloat()) {
                inputs.add(random(seed++, v.dims()));
            } else {
                long[] range = intRanges.getOrDefault(
                        v.name(),
                        v.dtype().bits() == 8
                                ? new long[] {v.dtype().minInt(), v.dtype().maxInt() + 1}
                                : new long[] {0, 100});
                inputs.add(randomInts(v.dtype(), seed++, range[0], range[1], v.dims()));
            }
        }
        List<NDArray> expected = ort(model, g, inputs, 1);
        if (interpreter) {
            try (NodeRunner r = NodeRunner.interpreter()) {
                compare(
                        "reference executor",
                        g,
                        ReferenceExecutor.run(g, r, inputs.toArray(NDArray[]::new)),
                        expected,
                        rtol,
                        atol);
            }
        }
        try (CompiledNetwork cn = build != null ? build.apply(g) : Network.buildUntuned(g, Target.cpu())) {
            List<Value> outs = g.outputValues();
            NDArray[] o = new NDArray[outs.size()];
            for (int i = 0; i < o.length; i++)
                o[i] = NDArray.allocate(outs.get(i).dtype(), outs.get(i).dims());
            cn.run(inputs.toArray(NDArray[]::new), o);
            compare("compiled network", g, List.of(o), expected, rtol, atol);
        }
        return g;
    }

    /** Every output against ONNX Runtime's; a miss names each output that differs (the first is the cause). */
    static void compare(String who, Graph g, List<NDArray> actual, List<NDArray> expected, double rtol, double atol) {
        AssertionError first = null;
        StringBuilder misses = new StringBuilder();
        for (int i = 0; i < expected.size(); i++) {
            NDArray want = expected.get(i);
            boolean exact = !want.dtype().isFloat();
            try {
                actual.get(i).assertClose(want, exact ? 0 : rtol, exact ? 0 : atol);
            } catch (AssertionError e) {
                if (first == null) first = e;
                misses.append(misses.isEmpty() ? "" : "; ")
                        .append("output '")
                        .append(g.outputs().get(i))
                        .append("': ")
                        .append(e.getMessage());
            }
        }
        if (first != null) throw new AssertionError(who + " against ONNX Runtime: " + misses, first);
    }

    static OnnxJavaType javaType(DType t) {
        return switch (t) {
            case FLOAT32 -> OnnxJavaType.FLOAT;
            case INT8 -> OnnxJavaType.INT8;
            case UINT8 -> OnnxJavaType.UINT8;
            case INT16 -> OnnxJavaType.INT16;
            case INT32 -> OnnxJavaType.INT32;
            case INT64 -> OnnxJavaType.INT64;
            case BOOL -> OnnxJavaType.BOOL;
            default -> throw new AssertionError("no ONNX Runtime input of type " + t);
        };
    }

    static NDArray random(long seed, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        NDArray a = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, shape);
        for (long i = 0; i < a.numElements(); i++) a.setDoubleFlat((float) (2 * r.nextDouble() - 1), i);
        return a;
    }

    static NDArray randomInts(DType t, long seed, long lo, long hi, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        NDArray a = NDArray.allocate(t, shape);
        for (long i = 0; i < a.numElements(); i++) a.setLongFlat(r.nextLong(lo, hi), i);
        return a;
    }

    /** ONNX Runtime's outputs (default CPU provider, all graph optimisations) for the graph's inputs. */
    static List<NDArray> ort(Object model, Graph g, List<NDArray> inputs, int threads) {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions o = new OrtSession.SessionOptions()) {
            o.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            o.setIntraOpNumThreads(threads);
            try (OrtSession s = model instanceof Path p
                    ? env.createSession(p.toString(), o)
                    : env.createSession((byte[]) model, o)) {
                Map<String, OnnxTensor> feed = new HashMap<>();
                try {
                    for (int i = 0; i < inputs.size(); i++) {
                        NDArray in = inputs.get(i);
                        ByteBuffer data = in.segment().asByteBuffer().order(ByteOrder.nativeOrder());
                        feed.put(
                                g.inputs().get(i).name(),
                                OnnxTensor.createTensor(env, data, in.shape(), javaType(in.dtype())));
                    }
                    try (OrtSession.Result r = s.run(feed)) {
                        List<NDArray> out = new ArrayList<>();
                        int i = 0;
                        for (Map.Entry<String, OnnxValue> e : r) {
                            OnnxTensor t = (OnnxTensor) e.getValue();
                            Value v = g.outputValues().get(i++);
                            NDArray a = NDArray.allocate(v.dtype(), t.getInfo().getShape());
                            ByteBuffer bb = t.getByteBuffer();
                            if (bb.remaining() != a.numElements() * v.dtype().bytes()) {
                                throw new AssertionError("ONNX Runtime's output '" + e.getKey() + "' is " + t.getInfo()
                                        + ", Kiln's " + v);
                            }
                            MemorySegment.copy(MemorySegment.ofBuffer(bb), 0, a.segment(), 0, bb.remaining());
                            out.add(a);
                        }
                        return out;
                    }
                } finally {
                    feed.values().forEach(OnnxTensor::close);
                }
            }
        } catch (OrtException e) {
            throw new AssertionError("ONNX Runtime failed on the model: " + e.getMessage(), e);
        }
    }
}
