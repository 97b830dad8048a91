package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.nio.file.Path;

/** A network (a two-layer MLP) built op by op, tuned as a whole, run, and checked op by op. */
public final class NetworkExample {
    private NetworkExample() {}

    /** {@code ./kiln sample network [batch] [trials] [log]}: defaults 8, 64 trials, mlp.jsonl. */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 8), Samples.intArg(args, 1, 64), Path.of(args.length > 2 ? args[2] : "mlp.jsonl"));
    }

    public static void run(int batch, int trials, Path log) {
        // readme:begin
        GraphBuilder g = new GraphBuilder("mlp");
        Value in = g.input("x", FLOAT32, batch, 784);
        Value w1 = g.weight("w1", 1, 0.05, 256, 784), b1 = g.weight("b1", 2, 0.1, 256);
        Value h = g.relu("h", g.biasAdd("fc1", g.dense("fc1.mm", in, w1), b1, -1));
        Graph mlp = g.output(g.softmax("p", g.dense("fc2", h, g.weight("w2", 3, 0.05, 10, 256)), -1))
                .build();
        System.out.println(mlp); // one line per node: shape, op, attributes
        System.out.println(Network.partition(mlp)); // the fused groups, each one tuning task

        NetworkTuneOptions options =
                NetworkTuneOptions.builder().trials(trials).logFile(log).build(); // trials over all tasks
        try (CompiledNetwork net = Network.tune(mlp, Target.CPU, options);
                NodeRunner interpreter = NodeRunner.interpreter();
                NDArray x = NDArray.random(FLOAT32, 7, batch, 784);
                NDArray y = net.run(x);
                NDArray expected = ReferenceExecutor.run(mlp, interpreter, x).getFirst()) { // op by op
            y.assertClose(expected, 1e-4, 1e-5);
            System.out.println(net.summary()); // groups, tasks, kernel calls, planned memory
        }
        // readme:end
    }
}
