package dev.kiln.onnx;

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
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

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
        byte[] bytes = m.toBytes();
        Graph g = OnnxImporter.fromModel(m.build(), dims);
        List<NDArray> inputs = new ArrayList<>();
        long seed = 7;
        for (Value v : g.inputs()) inputs.add(random(seed++, v.dims()));
        List<float[]> expected = ort(bytes, g, inputs, 1);
        if (interpreter) {
            try (NodeRunner r = NodeRunner.interpreter()) {
                compare("reference executor", g, ReferenceExecutor.run(g, r, inputs.toArray(NDArray[]::new)), expected, rtol, atol);
            }
        }
        try (CompiledNetwork cn = Network.buildUntuned(g, Target.cpu())) {
            List<Value> outs = g.outputValues();
            NDArray[] o = new NDArray[outs.size()];
            for (int i = 0; i < o.length; i++) o[i] = NDArray.allocate(outs.get(i).dtype(), outs.get(i).dims());
            cn.run(inputs.toArray(NDArray[]::new), o);
            compare("compiled network", g, List.of(o), expected, rtol, atol);
        }
        return g;
    }

    static void compare(String who, Graph g, List<NDArray> actual, List<float[]> expected, double rtol, double atol) {
        for (int i = 0; i < expected.size(); i++) {
            NDArray want = NDArray.fromFloats(expected.get(i), actual.get(i).shape());
            try {
                actual.get(i).assertClose(want, rtol, atol);
            } catch (AssertionError e) {
                throw new AssertionError(who + ", output '" + g.outputs().get(i) + "' against ONNX Runtime: " + e.getMessage(), e);
            }
        }
    }

    static NDArray random(long seed, long... shape) {
        SplittableRandom r = new SplittableRandom(seed);
        NDArray a = NDArray.allocate(dev.kiln.ir.DType.FLOAT32, shape);
        for (long i = 0; i < a.numElements(); i++) a.setDoubleFlat((float) (2 * r.nextDouble() - 1), i);
        return a;
    }

    /** ONNX Runtime's outputs (default CPU provider, all graph optimisations) for the graph's inputs. */
    static List<float[]> ort(byte[] model, Graph g, List<NDArray> inputs, int threads) {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions o = new OrtSession.SessionOptions()) {
            o.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            o.setIntraOpNumThreads(threads);
            try (OrtSession s = env.createSession(model, o)) {
                Map<String, OnnxTensor> feed = new HashMap<>();
                try {
                    for (int i = 0; i < inputs.size(); i++) {
                        feed.put(g.inputs().get(i).name(), OnnxTensor.createTensor(env, FloatBuffer.wrap(inputs.get(i).toFloatArray()), inputs.get(i).shape()));
                    }
                    try (OrtSession.Result r = s.run(feed)) {
                        List<float[]> out = new ArrayList<>();
                        for (Map.Entry<String, OnnxValue> e : r) {
                            FloatBuffer fb = ((OnnxTensor) e.getValue()).getFloatBuffer();
                            float[] f = new float[fb.remaining()];
                            fb.get(f);
                            out.add(f);
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
