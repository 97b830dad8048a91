package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.ir.DType;
import dev.kiln.nn.Winograd;
import dev.kiln.runtime.NDArray;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replaces the float32 3x3, stride-1, dilation-1, one-group NHWC convolutions with a constant weight by Winograd
 * convolutions ({@link Op.Conv2dWinograd}), the weight transformed once here ({@link Winograd#transformWeight(float[],
 * int, int, int)}), as TVM's x86 strategy does for the auto-scheduler (its AlterOpLayout pre-computes the weight
 * transform). Which convolutions and which tile size: {@link #tileSize}. The outputs differ from the direct
 * convolution's by float32 rounding of the transforms (about 1e-5 relative for F(4x4, 3x3) on unit-scale data).
 *
 * <p>On by default in {@code Network}'s CPU partition; {@code -Dkiln.winograd=false} turns it off (logs tuned before
 * it, 2026-12-07, hold direct-convolution programs only).
 */
public final class WinogradConvs {
    private WinogradConvs() {}

    /** Whether the pass runs by default ({@code -Dkiln.winograd}, true unless set to false). */
    public static boolean enabled() {
        return !"false".equalsIgnoreCase(System.getProperty("kiln.winograd", "true"));
    }

    /**
     * The tile size m of F(m x m, 3 x 3) for a 3x3 stride-1 convolution with an output of {@code oh} x {@code ow} and
     * {@code ci} -> {@code co} channels, or 0 to keep it direct. Measured on ResNet-50's four 3x3 shapes (Zen 5, 2
     * threads, 100 trials each, docs/PERFORMANCE.md): F(4x4) where both channel counts are over 64 and at most 128
     * (28 x 28 x 128: 0.26 ms against F(2x2)'s 0.38 and the direct conv's 0.57); F(2x2) for other outputs of at
     * least 7 x 7 with 32 or more channels in and out (56 x 56 x 64: 0.38 against 0.59, where F(4x4)'s best was
     * 0.89; 14 x 14 x 256: 0.345 against 0.58, F(4x4) no faster with 36/16 as many weight bytes as F(2x2); at 512
     * channels F(4x4)'s rounding on the tuner's unit-scale check inputs passes its 1e-3 tolerance no more); direct
     * otherwise.
     */
    public static int tileSize(long oh, long ow, long ci, long co) {
        if (oh < 7 || ow < 7 || ci < 32 || co < 32) return 0;
        return ci > 64 && ci <= 128 && co > 64 && co <= 128 ? 4 : 2;
    }

    public static Graph apply(Graph g) {
        GraphEditor e = new GraphEditor(g);
        Map<String, String> transformed = new HashMap<>();
        for (int i = 0; i < e.nodes.size(); i++) {
            Node n = e.nodes.get(i);
            if (!(n.op() instanceof Op.Conv2d c) || !eligible(g, n, c)) continue;
            List<Long> out = n.output().shape();
            NDArray w = g.constant(n.inputs().get(1));
            long[] ws = w.shape();
            int m = tileSize(out.get(1), out.get(2), ws[2], ws[3]);
            if (m == 0) continue;
            String key = n.inputs().get(1) + "#" + m;
            String wName = transformed.get(key);
            if (wName == null) {
                int ci = (int) ws[2], co = (int) ws[3];
                float[] u = Winograd.transformWeight(w.toFloatArray(), ci, co, m);
                NDArray arr = GraphBuilder.autoArray(DType.FLOAT32, m + 2, m + 2, ci, co);
                for (int k = 0; k < u.length; k++) arr.setDoubleFlat(u[k], k);
                wName = e.freshName(n.inputs().get(1) + ".winograd" + m);
                e.constants.put(wName, arr);
                transformed.put(key, wName);
            }
            e.nodes.set(
                    i,
                    new Node(
                            new Op.Conv2dWinograd(m, c.pads()),
                            List.of(n.inputs().get(0), wName),
                            n.output()));
        }
        return e.build();
    }

    private static boolean eligible(Graph g, Node n, Op.Conv2d c) {
        if (!c.layout().equals("NHWC") || c.groups() != 1) return false;
        if (!c.strides().equals(List.of(1L, 1L)) || !c.dilations().equals(List.of(1L, 1L))) return false;
        String w = n.inputs().get(1);
        if (!g.isConstant(w) || n.output().dtype() != DType.FLOAT32) return false;
        NDArray wa = g.constant(w);
        long[] s = wa.shape();
        return wa.dtype() == DType.FLOAT32 && s.length == 4 && s[0] == 3 && s[1] == 3;
    }
}
