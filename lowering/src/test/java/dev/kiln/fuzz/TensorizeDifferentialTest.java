package dev.kiln.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.nn.Pad;
import dev.kiln.nn.Quant;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The differential test's tensorizable draws: random int8 (u8 x s8, sometimes with a requantize
 * epilogue) and bf16 packed matmuls and packed conv2d layers, tiled at random around a tensorize step (outer
 * tile of m, split of the reduction's outer part, order of the outer loops, parallel, auto-unroll),
 * some convs reading an input of fewer channels zero-padded to the weight's (and a spatial border) through the
 * fast-math CPU pipeline ({@code SkipPaddedTerms}),
 * lowered with the verifier on and run in the interpreter against the default lowering: int8
 * exactly, bf16 within rtol/atol 1e-4 (float32 sums of exact bf16 products in another order).
 * Seeds as in {@link DifferentialTest} ({@code -Dkiln.fuzz.seed}, {@code -Dkiln.fuzz.cases}; 40 cases).
 */
class TensorizeDifferentialTest {
    static final int CASES = Integer.getInteger("kiln.fuzz.cases", 40);

    /** A CPU target whose pipeline skips zero-padding terms (only the lowering reads it: nothing is compiled). */
    private static final CpuTarget FAST_CPU = Target.cpu().withFastMath(true);

    @Test
    void tensorizedProgramsMatchTheDefaultLowering() {
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < CASES; c++) {
            long seed = DifferentialTest.SEED + 1_000_003L * (c + 1);
            SplittableRandom rng = new SplittableRandom(seed);
            String where = "tensorize case " + c + " seed " + seed;
            boolean bf16 = rng.nextBoolean();
            boolean conv = rng.nextInt(3) == 0;
            DType a = bf16 ? DType.BFLOAT16 : DType.UINT8, b = bf16 ? DType.BFLOAT16 : DType.INT8;
            int g = LowPrecision.group(a);
            long m = 1 + rng.nextInt(8), n = 16L * (1 + rng.nextInt(3)), k = (long) g * (2 + rng.nextInt(10));
            ComputeDAG dag;
            Tensor out;
            boolean padded = conv && rng.nextBoolean();
            if (conv) {
                // padded: fewer channels than the weight's rows (an RGB image's 3 of 4, 6 of 8), zero-filled up to
                // them with the spatial border, as the graph's conv2d_packed reads an odd-channelled input
                long channels = padded ? k - 1 - rng.nextInt(g - 1) : k;
                long pad = padded ? 1 : 0;
                Tensor x = Te.placeholder("x", a, 1, 2 + rng.nextInt(4), 2 + rng.nextInt(4), channels);
                if (padded) x = Pad.pad(x, new long[] {0, pad, pad, 0}, new long[] {0, pad, pad, k - channels}, 0.0);
                Tensor w = Te.placeholder("w", b, 1 + rng.nextInt(2), 1 + rng.nextInt(2), k, n);
                out = LowPrecision.conv2dPacked(x, LowPrecision.packConv2dWeight(w), 1);
            } else {
                Tensor x = Te.placeholder("x", a, m, k);
                Tensor w = Te.placeholder("w", b, n, k);
                out = LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w));
            }
            boolean requant = !bf16 && rng.nextBoolean();
            dag = requant
                    ? ComputeDAG.of(Quant.requantize(
                            out, Te.placeholder("scale", DType.FLOAT32, 1), Te.placeholder("zero", DType.UINT8, 1)))
                    : ComputeDAG.of(out);
            Schedule sch;
            try {
                sch = schedule(dag, out, conv, bf16, g, rng);
                if (!Schedule.fromJson(sch.toJson(), dag).equals(sch)) throw new AssertionError("JSON round trip");
                // a padded conv goes through the fast-math CPU pipeline, whose SkipPaddedTerms must leave the
                // tensorized nests whole (it once narrowed a nest's pair loop to the one real channel of a pair)
                PrimFunc f = padded
                        ? Lowering.lower(
                                "tensorized",
                                sch,
                                FAST_CPU,
                                Lowering.Options.defaults().withVerify(true))
                        : Lowering.lower(
                                "tensorized", sch, Lowering.Options.defaults().withVerify(true));
                assertThat(f.toString()).contains("tensorize$");
                String diff = compare(dag, LowerDefault.lower("reference", dag), f, seed, bf16);
                if (diff != null) failures.add(where + ": " + diff + "\n" + sch.toJavaSource());
            } catch (RuntimeException | AssertionError e) {
                failures.add(where + ": " + e);
            }
        }
        assertThat(failures).as("failing tensorized cases").isEmpty();
    }

    /**
     * AMX tiles: packed u8 x s8 or bf16 matmuls of 16 to 48 rows and columns and one to three tiles of reduction,
     * tiled 16 x 16 x (a tile's depth) around {@code tdpbusd} / {@code tdpbf16ps}, the outer loops in a random order,
     * parallel or not, with the int8 requantization epilogue computed at the tile or at root.
     */
    @Test
    void amxTiledProgramsMatchTheDefaultLowering() {
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < Math.max(1, CASES / 4); c++) {
            long seed = DifferentialTest.SEED + 2_000_029L * (c + 1);
            SplittableRandom rng = new SplittableRandom(seed);
            String where = "AMX case " + c + " seed " + seed;
            boolean bf16 = rng.nextBoolean();
            DType a = bf16 ? DType.BFLOAT16 : DType.UINT8, b = bf16 ? DType.BFLOAT16 : DType.INT8;
            int depth = AmxTensorIntrinsics.ROW_BYTES / a.bytes();
            long m = 16L * (1 + rng.nextInt(3)), n = 16L * (1 + rng.nextInt(3)), k = depth * (1L + rng.nextInt(3));
            Tensor out = LowPrecision.matmulPacked(
                    Te.placeholder("x", a, m, k), LowPrecision.packDenseWeight(Te.placeholder("w", b, n, k)));
            ComputeDAG dag = !bf16 && rng.nextBoolean()
                    ? ComputeDAG.of(Quant.requantize(
                            out, Te.placeholder("scale", DType.FLOAT32, 1), Te.placeholder("zero", DType.UINT8, 1)))
                    : ComputeDAG.of(out);
            try {
                ScheduleBuilder s = ScheduleBuilder.on(dag);
                var st = s.stage(out.op().name());
                st.split("m", 16);
                st.split("n", 16);
                st.split("k", depth);
                List<String> outer = new ArrayList<>(List.of("m.0", "n.0"));
                java.util.Collections.shuffle(outer, new java.util.Random(rng.nextLong()));
                st.reorder(outer.get(0), outer.get(1), "k.0", "m.1", "n.1", "k.1");
                st.tensorize("m.1", bf16 ? AmxTensorIntrinsics.AMX_BF16 : AmxTensorIntrinsics.AMX_U8S8);
                if (rng.nextBoolean()) st.parallel(outer.get(0));
                if (dag.outputs().get(0).op() != out.op() && rng.nextBoolean()) {
                    // inside the requantize's tiles of 16 rows: whole tiles for the intrinsic (inside one row,
                    // bound inference would leave it 1 row, which the checks refuse)
                    var q = s.stage(dag.outputs().get(0).op().name());
                    st.computeAt(q, q.split(q.loops().get(0).name(), 16).get(0).name());
                }
                Schedule sch = s.build();
                if (!Schedule.fromJson(sch.toJson(), dag).equals(sch)) throw new AssertionError("JSON round trip");
                PrimFunc f =
                        Lowering.lower("amx", sch, Lowering.Options.defaults().withVerify(true));
                assertThat(f.toString()).contains("tensorize$x86.amx.");
                String diff = compare(dag, LowerDefault.lower("reference", dag), f, seed, bf16);
                if (diff != null) failures.add(where + ": " + diff + "\n" + sch.toJavaSource());
            } catch (RuntimeException | AssertionError e) {
                failures.add(where + ": " + e);
            }
        }
        assertThat(failures).as("failing AMX cases").isEmpty();
    }

    private static Schedule schedule(
            ComputeDAG dag, Tensor out, boolean conv, boolean bf16, int g, SplittableRandom rng) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var st = s.stage(out.op().name());
        String row = conv ? "w" : "m", col = conv ? "o" : "n", red = conv ? "rc" : "k";
        String intrinsic = bf16 ? TensorIntrinsics.BF16_DOT : TensorIntrinsics.VNNI_U8S8;
        st.split(col, 16);
        st.split(red, g);
        long rowExt = out.dim(conv ? 2 : 0);
        List<Integer> divisors = new ArrayList<>();
        for (int d = 1; d <= rowExt; d++) if (rowExt % d == 0) divisors.add(d);
        st.split(row, divisors.get(rng.nextInt(divisors.size())));
        List<String> outer = new ArrayList<>(List.of(row + ".0", col + ".0"));
        if (conv) outer.addAll(0, List.of("b", "h"));
        List<String> reduce = new ArrayList<>(List.of(red + ".0"));
        if (conv) reduce.addAll(List.of("ry", "rx"));
        java.util.Collections.shuffle(reduce, new java.util.Random(rng.nextLong()));
        List<String> order = new ArrayList<>(outer);
        order.addAll(reduce);
        order.add(row + ".1");
        order.add(col + ".1");
        order.add(red + ".1");
        st.reorder(order.toArray(String[]::new));
        st.tensorize(col + ".1", intrinsic);
        if (rng.nextBoolean()) st.parallel(outer.get(0));
        if (rng.nextBoolean()) st.autoUnrollMaxStep(outer.get(0), 64);
        if (dag.outputs().get(0).op() != out.op() && rng.nextBoolean()) {
            var q = s.stage(dag.outputs().get(0).op().name());
            st.computeAt(q, q.loops().get(q.loops().size() - 2).name());
        }
        return s.build();
    }

    private static String compare(ComputeDAG dag, PrimFunc reference, PrimFunc scheduled, long seed, boolean bf16) {
        List<NDArray> inputs = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(seed);
        for (Tensor t : dag.inputs()) {
            NDArray x = NDArray.allocate(t.dtype(), t.shape().toArray());
            for (long i = 0; i < x.numElements(); i++) {
                switch (t.dtype()) {
                    case UINT8 -> x.setLongFlat(r.nextInt(256), i);
                    case INT8 -> x.setLongFlat(r.nextInt(256) - 128, i);
                    case FLOAT32 -> x.setDoubleFlat(0.0003 + r.nextDouble() * 0.001, i);
                    default -> x.setDoubleFlat(r.nextDouble() * 2 - 1, i);
                }
            }
            inputs.add(x);
        }
        NDArray expected = run(reference, dag, inputs), actual = run(scheduled, dag, inputs);
        if (!bf16) {
            return java.util.Arrays.equals(expected.toLongArray(), actual.toLongArray()) ? null : "int8 results differ";
        }
        Comparison cmp = actual.compareTo(expected, 1e-4, 1e-4);
        return cmp.ok() ? null : cmp.report();
    }

    private static NDArray run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        Tensor out = dag.outputs().get(0);
        NDArray o = NDArray.allocate(out.dtype(), out.shape().toArray());
        List<NDArray> args = new ArrayList<>(inputs);
        args.add(o);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return o;
    }
}
