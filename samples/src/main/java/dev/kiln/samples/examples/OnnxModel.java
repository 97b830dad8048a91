package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * An ONNX model imported, tuned and run. Without a model file it writes a small one first (an MLP
 * as PyTorch exports it: Gemm, Relu, Gemm, Softmax, with a symbolic batch extent).
 */
public final class OnnxModel {
    private OnnxModel() {}

    /** {@code ./kiln sample onnx [model.onnx] [trials]}: default a small MLP written to a temporary file, 32 trials. */
    public static void main(String[] args) {
        Path model = args.length > 0 ? Path.of(args[0]) : writeSmallModel(null);
        run(model, Samples.intArg(args, 1, 32));
    }

    /** Writes the small MLP to {@code file} (a temporary file when null) and returns its path. */
    public static Path writeSmallModel(Path file) {
        try {
            Path out = file != null ? file : Files.createTempFile("kiln-sample-mlp", ".onnx");
            ModelWriter m = new ModelWriter("mlp", 17);
            m.input("x", "batch", 64L);
            String w1 = m.weight("fc1.weight", 1, 0.1, 32, 64), b1 = m.weight("fc1.bias", 2, 0.1, 32);
            String h = m.node("Gemm", new String[] {"x", w1, b1}, "fc1", "transB", 1L);
            String r = m.node("Relu", new String[] {h}, "relu");
            String w2 = m.weight("fc2.weight", 3, 0.1, 10, 32), b2 = m.weight("fc2.bias", 4, 0.1, 10);
            String logits = m.node("Gemm", new String[] {r, w2, b2}, "fc2", "transB", 1L);
            m.node("Softmax", new String[] {logits}, "probs", "axis", -1L);
            return m.output("probs").write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void run(Path model, int trials) {
        // readme:begin
        Graph net = OnnxImporter.load(model, Map.of("batch", 4L)); // bind symbolic extents by name
        System.out.println(net); // the Kiln graph: one line per node
        long[] shape = net.inputs().getFirst().shape().stream()
                .mapToLong(Long::longValue)
                .toArray();

        NetworkTuneOptions options = NetworkTuneOptions.builder().trials(trials).build();
        try (CompiledNetwork cn = Network.tune(net, Target.CPU, options);
                NodeRunner interpreter = NodeRunner.interpreter();
                NDArray x = NDArray.random(FLOAT32, 5, shape); // ONNX's own layout (NCHW for images)
                NDArray y = cn.run(x);
                NDArray expected = ReferenceExecutor.run(net, interpreter, x).getFirst()) {
            y.assertClose(expected, 1e-4, 1e-5);
            System.out.println(cn.summary());
        }
        // readme:end
    }
}
