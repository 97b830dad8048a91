package dev.kiln.samples.onnx;

import dev.kiln.onnx.ModelWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random chains of image, elementwise, broadcast, reshape, transpose, matmul and reduction nodes,
 * which mix NHWC values, views and ONNX-order values in every combination the importer's layout
 * logic meets; each model checked against ONNX Runtime (rtol 1e-4, atol 1e-5). A failure names its seed.
 */
class RandomModelsTest {

    static Stream<Long> seeds() {
        return Stream.iterate(1L, s -> s + 1).limit(24);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomChainMatchesOnnxRuntime(long seed) {
        ModelWriter m = randomModel(seed);
        try {
            OnnxCheck.check(m, Map.of("batch", 2L), 1e-4, 1e-5, seed % 3 == 0);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(
                    "random model, seed " + seed + ": " + e.getMessage() + "\n"
                            + m.build().getGraph(),
                    e);
        }
    }

    /** A chain of 6 to 10 nodes from a float32 input [batch, c, h, w]. */
    static ModelWriter randomModel(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        ModelWriter m = new ModelWriter("random" + seed, 17);
        long c = 2 + r.nextInt(3), h = 3 + r.nextInt(3), w = 3 + r.nextInt(3);
        m.input("x", "batch", c, h, w);
        String cur = "x";
        long[] shape = {2, c, h, w};
        List<String> sameShape = new ArrayList<>(List.of("x"));
        int steps = 6 + r.nextInt(5);
        for (int i = 0; i < steps; i++) {
            String out = "v" + i;
            int rank = shape.length;
            int pick = r.nextInt(10);
            if (rank == 4 && pick < 2) { // conv, 1x1 or 3x3 with padding, keeps H and W
                long k = r.nextBoolean() ? 1 : 3, co = 2 + r.nextInt(3);
                m.node(
                        "Conv",
                        new String[] {cur, m.weight(out + ".w", seed * 100 + i, 0.5, co, shape[1], k, k)},
                        out,
                        "pads",
                        new long[] {k / 2, k / 2, k / 2, k / 2});
                shape = new long[] {shape[0], co, shape[2], shape[3]};
                sameShape.clear();
            } else if (pick == 2) {
                m.node(r.nextBoolean() ? "Relu" : "Sigmoid", new String[] {cur}, out);
            } else if (pick == 3) { // a constant broadcast along some trailing axes, or a value of the same shape
                String other;
                if (sameShape.size() > 1 && r.nextBoolean()) {
                    other = sameShape.get(r.nextInt(sameShape.size()));
                } else {
                    long[] cs = shape.clone();
                    for (int d = 0; d < cs.length; d++) if (r.nextBoolean()) cs[d] = 1;
                    int drop = r.nextInt(cs.length);
                    other = m.weight(out + ".c", seed * 100 + i, 1, Arrays.copyOfRange(cs, drop, cs.length));
                }
                m.node(
                        r.nextBoolean() ? "Add" : "Mul",
                        r.nextBoolean() ? new String[] {cur, other} : new String[] {other, cur},
                        out);
            } else if (pick == 4 && rank > 1) { // a random permutation
                List<Long> p = new ArrayList<>();
                for (long d = 0; d < rank; d++) p.add(d);
                java.util.Collections.shuffle(p, new java.util.Random(seed * 31 + i));
                long[] perm = p.stream().mapToLong(Long::longValue).toArray();
                m.node("Transpose", new String[] {cur}, out, "perm", perm);
                long[] ns = new long[rank];
                for (int d = 0; d < rank; d++) ns[d] = shape[(int) perm[d]];
                shape = ns;
                sameShape.clear();
            } else if (pick == 5 && rank >= 3) { // merge the last two axes
                long[] ns = Arrays.copyOf(shape, rank - 1);
                ns[rank - 2] = shape[rank - 2] * shape[rank - 1];
                m.node("Reshape", new String[] {cur, m.longs(out + ".s", ns)}, out);
                shape = ns;
                sameShape.clear();
            } else if (pick == 6) { // x @ W on the last axis
                long n = 2 + r.nextInt(4);
                m.node(
                        "MatMul",
                        new String[] {cur, m.weight(out + ".w", seed * 100 + i, 0.5, shape[rank - 1], n)},
                        out);
                shape = shape.clone();
                shape[rank - 1] = n;
                sameShape.clear();
            } else if (pick == 7) {
                m.node("Softmax", new String[] {cur}, out, "axis", (long) -1);
            } else if (pick == 8 && rank >= 2) { // mean over the last axis or the two last ones, kept
                long[] axes = rank >= 3 && r.nextBoolean() ? new long[] {rank - 2, rank - 1} : new long[] {rank - 1};
                m.node("ReduceMean", new String[] {cur}, out, "axes", axes, "keepdims", 1L);
                shape = shape.clone();
                for (long a : axes) shape[(int) a] = 1;
                sameShape.clear();
            } else { // concat with itself along a random axis
                int axis = r.nextInt(rank);
                m.node("Concat", new String[] {cur, cur}, out, "axis", (long) axis);
                shape = shape.clone();
                shape[axis] *= 2;
                sameShape.clear();
            }
            cur = out;
            sameShape.add(cur);
        }
        return m.output(cur);
    }
}
