package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.bench.network.BenchHost;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Value;
import dev.kiln.graph.pass.ToBfloat16;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.time.Duration;

/**
 * seq heads dh threads seconds logdir [rounds]: a BERT layer's attention alone (q, k, v [seq, heads*dh] split into
 * heads by reshape and transpose, scores = q k scaled and masked, softmax, context = probs v, merged back) as float32
 * and through ToBfloat16 with bfloat16 activations (both products on bfloat16 operands, float32 sums), each tuned for
 * {@code seconds} (logs resumed from logdir), then timed in alternation (ten warm calls, then CallTimer with
 * network-bench's policy), the float32 one first.
 */
public class AttentionAB {
    public static void main(String[] a) throws Exception {
        int seq = Integer.parseInt(a[0]), heads = Integer.parseInt(a[1]), dh = Integer.parseInt(a[2]);
        int threads = Integer.parseInt(a[3]), seconds = Integer.parseInt(a[4]);
        Path dir = Path.of(a[5]);
        int rounds = a.length > 6 ? Integer.parseInt(a[6]) : 3;
        GraphBuilder g = new GraphBuilder("attention");
        int hidden = heads * dh;
        Value q = g.input("q", DType.FLOAT32, seq, hidden), k = g.input("k", DType.FLOAT32, seq, hidden);
        Value v = g.input("v", DType.FLOAT32, seq, hidden);
        Value qh = g.transpose("q_heads", g.reshape("q_split", q, seq, heads, dh), 1, 0, 2);
        Value kh = g.transpose("k_heads", g.reshape("k_split", k, seq, heads, dh), 1, 2, 0);
        Value vh = g.transpose("v_heads", g.reshape("v_split", v, seq, heads, dh), 1, 0, 2);
        Value s = g.multiply("scaled", g.batchMatmul("scores", qh, kh, false, false),
                g.fill("scale", (float) (1 / Math.sqrt(dh)), 1));
        Value p = g.softmax("probs", g.add("masked", s, g.uniform("mask", 3, -0.5, 0, seq)), -1);
        Value ctx = g.batchMatmul("context", p, vh, false, false);
        Graph f32 = g.output(g.reshape("merged", g.transpose("ctx_heads", ctx, 1, 0, 2), seq, hidden)).build();
        Graph bf = ToBfloat16.apply(f32, ToBfloat16.Activations.BFLOAT16).graph();
        var target = Target.cpu().withCores(threads).withFastMath(true);
        NDArray[] in = f32.inputs().stream().map(x -> NDArray.random(DType.FLOAT32, 18, x.dims())).toArray(NDArray[]::new);
        CompiledNetwork[] nets = new CompiledNetwork[2];
        String[] names = {"float32", "bf16"};
        Graph[] graphs = {f32, bf};
        for (int i = 0; i < 2; i++) {
            NetworkTuneOptions o = NetworkTuneOptions.builder()
                    .trials(100_000)
                    .timeBudget(Duration.ofSeconds(seconds))
                    .logFile(dir.resolve("attention-" + seq + "-" + names[i] + "-" + threads + "t.jsonl"))
                    .build();
            nets[i] = Network.tune(graphs[i], target, o);
            System.out.println(names[i] + ": " + nets[i].tuning().orElseThrow().tasks().size() + " tasks, load "
                    + BenchHost.loadAverage());
        }
        NDArray[][] outs = new NDArray[2][];
        for (int i = 0; i < 2; i++) {
            outs[i] = graphs[i].outputValues().stream().map(x -> NDArray.allocate(x.dtype(), x.dims()))
                    .toArray(NDArray[]::new);
            nets[i].run(in, outs[i]);
        }
        double max = 0, err = 0;
        for (long e = 0; e < outs[0][0].numElements(); e++) {
            max = Math.max(max, Math.abs(outs[0][0].getDoubleFlat(e)));
            err = Math.max(err, Math.abs(outs[0][0].getDoubleFlat(e) - outs[1][0].getDoubleFlat(e)));
        }
        System.out.printf("seq %d: max |out| %.3g, bf16 max |diff| %.3g%n", seq, max, err);
        for (int r = 0; r < 2 * rounds; r++) {
            int i = r % 2;
            CompiledNetwork cn = nets[i];
            NDArray[] o = outs[i];
            for (int w = 0; w < 10; w++) cn.run(in, o);
            CallTimer.Stats st = CallTimer.time(() -> cn.run(in, o), new CallTimer.Policy(500, 50, 2, 1_000_000, 60));
            System.out.printf("seq %d %-8s median %.4f ms  min %.4f  p10-p90 %.4f-%.4f  calls %d  load %s%n", seq,
                    names[i], st.median() * 1e3, st.min() * 1e3, st.p10() * 1e3, st.p90() * 1e3, st.calls(),
                    BenchHost.loadAverage());
        }
        for (CompiledNetwork cn : nets) cn.close();
    }
}
