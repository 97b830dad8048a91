package dev.kiln.bench.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ONNX Runtime on one model, as a team running it today would: the default CPU execution
 * provider, all graph optimisations, intra-op threads set; inputs bound once, so a timed run is
 * the session's run alone.
 */
final class OrtSessionRunner implements AutoCloseable {
    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession.SessionOptions options;
    private final OrtSession session;
    private final Map<String, OnnxTensor> feed = new LinkedHashMap<>();

    OrtSessionRunner(byte[] model, int threads, List<Value> inputs, NDArray[] data) {
        try {
            options = new OrtSession.SessionOptions();
            options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            options.setIntraOpNumThreads(threads);
            options.setInterOpNumThreads(1);
            session = env.createSession(model, options);
            for (int i = 0; i < inputs.size(); i++) {
                feed.put(inputs.get(i).name(), OnnxTensor.createTensor(env, FloatBuffer.wrap(data[i].toFloatArray()), data[i].shape()));
            }
        } catch (OrtException e) {
            throw new KilnException("ONNX Runtime cannot load the model: " + e.getMessage());
        }
    }

    /** One run; the outputs in the graph's order, as float32 arrays of the given shapes. */
    List<NDArray> run(List<Value> outputs) {
        try (OrtSession.Result r = session.run(feed)) {
            List<NDArray> out = new ArrayList<>();
            int i = 0;
            for (Map.Entry<String, OnnxValue> e : r) {
                FloatBuffer fb = ((OnnxTensor) e.getValue()).getFloatBuffer();
                float[] f = new float[fb.remaining()];
                fb.get(f);
                out.add(NDArray.fromFloats(f, outputs.get(i++).dims()));
            }
            return out;
        } catch (OrtException e) {
            throw new KilnException("ONNX Runtime failed: " + e.getMessage());
        }
    }

    /** One run whose outputs are dropped (the timed loop). */
    void runOnly() {
        try (OrtSession.Result r = session.run(feed)) {
            if (r.size() == 0) throw new KilnException("ONNX Runtime gave no outputs");
        } catch (OrtException e) {
            throw new KilnException("ONNX Runtime failed: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        feed.values().forEach(OnnxTensor::close);
        try {
            session.close();
        } catch (OrtException e) {
            throw new KilnException("closing the ONNX Runtime session: " + e.getMessage());
        }
        options.close();
    }
}
