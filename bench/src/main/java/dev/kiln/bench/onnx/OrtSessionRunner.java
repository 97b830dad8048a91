package dev.kiln.bench.onnx;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
        this(model, threads, inputs, data, o -> {});
    }

    /** The session options' last word before the session is made (profiling, for one). */
    @FunctionalInterface
    interface Options {
        void set(OrtSession.SessionOptions options) throws OrtException;
    }

    OrtSessionRunner(byte[] model, int threads, List<Value> inputs, NDArray[] data, Options extra) {
        try {
            options = new OrtSession.SessionOptions();
            options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            options.setIntraOpNumThreads(threads);
            options.setInterOpNumThreads(1);
            extra.set(options);
            session = env.createSession(model, options);
            for (int i = 0; i < inputs.size(); i++) {
                ByteBuffer b = data[i].segment().asByteBuffer().order(ByteOrder.nativeOrder());
                feed.put(
                        inputs.get(i).name(),
                        OnnxTensor.createTensor(env, b, data[i].shape(), javaType(data[i].dtype())));
            }
        } catch (OrtException e) {
            throw new KilnException("ONNX Runtime cannot load the model: " + e.getMessage());
        }
    }

    /** One run; the outputs in the graph's order, as arrays of the given values' types and shapes. */
    List<NDArray> run(List<Value> outputs) {
        try (OrtSession.Result r = session.run(feed)) {
            List<NDArray> out = new ArrayList<>();
            int i = 0;
            for (Map.Entry<String, OnnxValue> e : r) {
                Value v = outputs.get(i++);
                ByteBuffer b = ((OnnxTensor) e.getValue()).getByteBuffer();
                NDArray a = NDArray.allocate(v.dtype(), v.dims());
                if (b.remaining() != a.numElements() * v.dtype().bytes()) {
                    throw new KilnException(
                            "ONNX Runtime's output '" + e.getKey() + "' has " + b.remaining() + " bytes, Kiln's " + v
                                    + " " + a.numElements() * v.dtype().bytes());
                }
                MemorySegment.copy(MemorySegment.ofBuffer(b), 0, a.segment(), 0, b.remaining());
                out.add(a);
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

    /** Ends a profiling session's trace and returns its file ({@link Options} must have enabled profiling). */
    String endProfiling() throws OrtException {
        return session.endProfiling();
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
            default -> throw new KilnException("no ONNX Runtime tensor of type " + t);
        };
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
