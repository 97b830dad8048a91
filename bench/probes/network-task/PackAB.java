package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.bench.network.BenchHost;
import dev.kiln.bench.network.BenchNetworks;
import dev.kiln.graph.Graph;
import dev.kiln.graph.pass.ToBfloat16;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

/**
 * network log threads f32|bf16|bf16-act [rounds]: a zoo network (network-bench's names) built from its log twice, with
 * its weights packed (the layout rewrite, as tuned) and in their original layout, then timed in alternation (ten warm
 * calls, then CallTimer with network-bench's policy: 50 calls and 2 s at least), the packed one first; each line
 * gives the JIT compile time HotSpot spent during the timing window and the load after it.
 */
public class PackAB {
    public static void main(String[] a) throws Exception {
        Graph g = BenchNetworks.graphOf(a[0], 1);
        if (a[3].startsWith("bf16")) {
            g = ToBfloat16.apply(
                            g,
                            a[3].equals("bf16-act") ? ToBfloat16.Activations.BFLOAT16 : ToBfloat16.Activations.FLOAT32)
                    .graph();
        }
        int rounds = a.length > 4 ? Integer.parseInt(a[4]) : 3;
        var target = Target.cpu().withCores(Integer.parseInt(a[2])).withFastMath(true);
        NDArray[] in = g.inputs().stream()
                .map(v -> NDArray.random(DType.FLOAT32, 18, v.dims()))
                .toArray(NDArray[]::new);
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        try (CompiledNetwork packed = Network.build(g, target, Path.of(a[1]));
                CompiledNetwork plain = Network.buildWithoutPacking(g, target, Path.of(a[1]))) {
            NDArray[] outs = g.outputValues().stream()
                    .map(v -> NDArray.allocate(v.dtype(), v.dims()))
                    .toArray(NDArray[]::new);
            for (int r = 0; r < 2 * rounds; r++) {
                CompiledNetwork cn = r % 2 == 0 ? packed : plain;
                long j0 = jit.getTotalCompilationTime();
                for (int i = 0; i < 10; i++) cn.run(in, outs);
                CallTimer.Stats st =
                        CallTimer.time(() -> cn.run(in, outs), new CallTimer.Policy(500, 50, 2, 1_000_000, 60));
                System.out.printf(
                        "%-9s median %.3f ms  min %.3f  p10-p90 %.3f-%.3f  calls %d  jit %d ms  load %s%n",
                        r % 2 == 0 ? "packed" : "unpacked",
                        st.median() * 1e3,
                        st.min() * 1e3,
                        st.p10() * 1e3,
                        st.p90() * 1e3,
                        st.calls(),
                        jit.getTotalCompilationTime() - j0,
                        BenchHost.loadAverage());
            }
        }
    }
}
