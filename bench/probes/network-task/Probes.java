package dev.kiln.autoschedule.network;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.graph.Graph;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.IntImm;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** What the probes share: the network's tasks as `./kiln onnx` extracts them, a task's program, seeded arguments. */
final class Probes {
    private Probes() {}

    /** The CPU target with FMA contraction on {@code threads} cores, as `./kiln onnx` tunes. */
    static Target target(int threads) {
        return Target.cpu().withCores(threads).withFastMath(true);
    }

    /** The tasks of {@code model} (batch bound to 1), layout rewrite on. */
    static List<NetworkTask> tasks(String model, Target target) {
        Graph g = OnnxImporter.load(Path.of(model), Map.of("batch", 1L));
        return TaskExtraction.extract(Network.partition(g, target), target, true);
    }

    /** The schedule {@code stepsJson} gives (a steps array), or {@code best}'s when it is null. */
    static Schedule schedule(NetworkTask t, dev.kiln.autoschedule.search.BestProgram best, String stepsJson) throws Exception {
        return stepsJson == null
                ? best.schedule()
                : Schedule.fromSteps(new ObjectMapper().readTree(stepsJson), t.task().dag());
    }

    /** Seeded random arrays of the parameters' dtypes and shapes. */
    static NDArray[] randomArgs(List<Buffer> ps) {
        NDArray[] args = new NDArray[ps.size()];
        for (int i = 0; i < args.length; i++) {
            long[] dims = ps.get(i).shape().stream().mapToLong(e -> ((IntImm) e).value()).toArray();
            args[i] = NDArray.random(ps.get(i).dtype(), 7 + i, dims);
        }
        return args;
    }
}
