package dev.kiln.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmts;
import org.junit.jupiter.api.Test;

/** The tensorize step: checks, JSON and Java round trips, and the interpreter running the pattern. */
class TensorizeStepTest {

    /** {@code out[m, n] = sum_k x[m, k] * packed(w)[...]} with the weight packed by a root stage. */
    static ComputeDAG packedDense(DType a, DType b, long m, long n, long k) {
        Tensor x = Te.placeholder("x", a, m, k);
        Tensor w = Te.placeholder("w", b, n, k);
        return ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
    }

    /** Tiles n by 16 and k by the group, the tile innermost, and tensorizes it. */
    static Schedule tensorized(ComputeDAG dag, String intrinsic, int group) {
        return tensorizing(dag, intrinsic, group).build();
    }

    /** The builder of {@link #tensorized}, for more steps. */
    static ScheduleBuilder tensorizing(ComputeDAG dag, String intrinsic, int group) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        ScheduleBuilder.StageRef c = s.stage("matmul_packed");
        c.split("n", 16);
        c.split("k", group);
        c.reorder("m", "n.0", "k.0", "n.1", "k.1");
        c.tensorize("n.1", intrinsic);
        return s;
    }

    @Test
    void vnniRoundTripsAndInterpretsExactly() throws Exception {
        ComputeDAG dag = packedDense(DType.UINT8, DType.INT8, 6, 32, 40);
        Schedule sch = tensorized(dag, TensorIntrinsics.VNNI_U8S8, 4);
        assertThat(sch.toJson()).contains("[\"TS\",3,3,\"x86.avx512.vpdpbusd.16x4\"]");
        assertThat(Schedule.fromJson(sch.toJson(), packedDense(DType.UINT8, DType.INT8, 6, 32, 40))
                        .toJson())
                .isEqualTo(sch.toJson());
        assertRoundTripsAndInterpretsExactly(dag, sch, "n.1", TensorIntrinsics.VNNI_U8S8);
    }

    /**
     * The schedule's JSON and Java source (with its {@code .tensorize(loop, intrinsic)} line) rebuild it, and its
     * lowering, tensorized with {@code intrinsic}, computes the packed u8 x s8 dense exactly on seeded inputs.
     */
    static void assertRoundTripsAndInterpretsExactly(ComputeDAG dag, Schedule sch, String loop, String intrinsic)
            throws Exception {
        assertThat(Schedule.fromJson(sch.toJson(), dag)).isEqualTo(sch);
        String src = sch.toJavaSource();
        assertThat(src).contains(".tensorize(\"" + loop + "\", \"" + intrinsic + "\");");
        String cls = "package gen; import dev.kiln.schedule.*; import dev.kiln.te.ComputeDAG;\n"
                + "public class Rebuild implements java.util.function.Function<ComputeDAG, Schedule> {\n"
                + "  public Schedule apply(ComputeDAG dag) {\n" + src + "    return schedule;\n  }\n}\n";
        assertThat(JavaSourceTest.compileAndRun(cls).apply(dag)).isEqualTo(sch);

        PrimFunc f = Lowering.lower("tensorized", sch);
        assertThat(f.toString()).contains("tensorize$" + intrinsic);
        var x = dag.inputs().get(0);
        var w = dag.inputs().get(1);
        NDArray xs = LowPrecisionData.full(DType.UINT8, 1, x.shape().toArray());
        NDArray ws = LowPrecisionData.full(DType.INT8, 2, w.shape().toArray());
        NDArray out = NDArray.allocate(DType.INT32, x.dim(0), w.dim(0));
        Interpreter.run(f, xs, ws, out);
        assertThat(out.toLongArray()).containsExactly(LowPrecisionData.denseInt(xs, ws));
    }

    @Test
    void bf16InterpretsWithinBf16Tolerance() {
        ComputeDAG dag = packedDense(DType.BFLOAT16, DType.BFLOAT16, 3, 16, 64);
        PrimFunc f = Lowering.lower("bf16", tensorized(dag, TensorIntrinsics.BF16_DOT, 2));
        NDArray x = NDArray.random(DType.BFLOAT16, 3, 3, 64);
        NDArray w = NDArray.random(DType.BFLOAT16, 4, 16, 64);
        NDArray out = NDArray.allocate(DType.FLOAT32, 3, 16);
        Interpreter.run(f, x, w, out);
        // products of bf16 values are exact in float32; only the float32 sums round
        out.assertClose(LowPrecisionData.denseFloat(x, w), 1e-5, 1e-5);
    }

    @Test
    void refusesWhatDoesNotMatch() {
        ComputeDAG dag = packedDense(DType.UINT8, DType.INT8, 4, 32, 16);
        // wrong tile extent (shape)
        assertThatThrownBy(() -> {
                    ScheduleBuilder s = ScheduleBuilder.on(dag);
                    var c = s.stage("matmul_packed");
                    c.split("n", 8);
                    c.split("k", 4);
                    c.reorder("m", "n.0", "k.0", "n.1", "k.1");
                    c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
                })
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("extent 8");
        // reduction not split: the init would fall inside
        assertThatThrownBy(() -> {
                    ScheduleBuilder s = ScheduleBuilder.on(packedDense(DType.UINT8, DType.INT8, 4, 32, 4));
                    var c = s.stage("matmul_packed");
                    c.split("n", 16);
                    c.reorder("m", "n.0", "n.1", "k");
                    c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
                })
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("initialisation");
        // the dtypes are not the intrinsic's (pattern)
        assertThatThrownBy(() -> tensorized(
                        packedDense(DType.BFLOAT16, DType.BFLOAT16, 4, 32, 16), TensorIntrinsics.VNNI_U8S8, 4))
                .isInstanceOf(ScheduleException.class);
        // an unpacked weight: same computation, wrong layout
        Tensor x = Te.placeholder("x", DType.UINT8, 4, 16);
        Tensor w = Te.placeholder("w", DType.INT8, 32, 16);
        ComputeDAG plain = ComputeDAG.of(Te.compute("dense", Te.shape(4, 32), Te.names("m", "n"), (m, n) -> {
            var k = Te.reduceAxis(16, "k");
            return Te.sum(k, x.at(m, k).cast(DType.INT32).mul(w.at(n, k).cast(DType.INT32)));
        }));
        assertThatThrownBy(() -> {
                    ScheduleBuilder s = ScheduleBuilder.on(plain);
                    var c = s.stage("dense");
                    c.split("n", 16);
                    c.split("k", 4);
                    c.reorder("m", "n.0", "k.0", "n.1", "k.1");
                    c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
                })
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("laid out differently");
        // tensorized loops cannot be annotated afterwards
        assertThatThrownBy(() -> {
                    ScheduleBuilder s = ScheduleBuilder.on(dag);
                    var c = s.stage("matmul_packed");
                    c.split("n", 16);
                    c.split("k", 4);
                    c.reorder("m", "n.0", "k.0", "n.1", "k.1");
                    c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
                    c.unroll("k.1");
                })
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("annotated");
        assertThatThrownBy(() -> ScheduleBuilder.on(dag).stage("matmul_packed").tensorize("k", "no.such"))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("unknown tensor intrinsic");
    }

    /**
     * After the tensorize step, a step that leaves the tensorized stage and every stage's attachment and storage as
     * they were does not check the nest again ({@code TensorizeStep.unchangedFor}: the search replays each candidate's
     * steps); one that computes a stage inside the nest is still refused.
     */
    @Test
    void laterStepsOnOtherStagesSkipTheRecheckButAnAttachmentInsideTheNestIsRefused() {
        ScheduleBuilder s = tensorizing(packedDense(DType.UINT8, DType.INT8, 4, 32, 16), TensorIntrinsics.VNNI_U8S8, 4);
        var c = s.stage("matmul_packed");
        LoopState before = s.state();
        int mm = -1;
        for (int i = 0; i < before.stages().size(); i++)
            if (before.stages().get(i).name().equals("matmul_packed")) mm = i;
        var pack = s.stage("packed_w");
        pack.parallel(pack.loops().get(0));
        assertThat(TensorizeStep.unchangedFor(before, s.state(), mm)).isTrue();
        c.parallel("m");
        assertThat(TensorizeStep.unchangedFor(before, s.state(), mm)).isFalse();
        assertThatThrownBy(() -> pack.computeAt(c, "k.1"))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining("computed inside");
    }

    /** A tensorized tile whose rows ({@code mTile} of {@code m}) and vectors ({@code nTile} x 16) may leave a tail. */
    private static Schedule rowTiled(ComputeDAG dag, int mTile, int nTile) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", mTile);
        c.split("n", nTile, 16);
        c.split("k", 4);
        c.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "n.2", "k.1");
        c.tensorize("n.2", TensorIntrinsics.VNNI_U8S8);
        return s.build();
    }

    /** How many guards the tensorized nests of {@code f} hold, and how many guards it holds in all. */
    private static int[] guards(PrimFunc f) {
        int[] n = new int[2];
        Stmts.forEachStmt(f.body(), st -> {
            if (st instanceof IfThenElse) n[1]++;
            if (st instanceof Pragma p && p.tensorIntrinsic() != null) {
                Stmts.forEachStmt(p.body(), in -> {
                    if (in instanceof IfThenElse) n[0]++;
                });
            }
        });
        return n;
    }

    /**
     * A row tile with a tail (3 rows over 7; 2 vectors over 3, the intrinsic's axis split outside
     * its loop): the lowering guards those tails around the tensorized nest, which stays exact, and
     * the interpreter's result is exact.
     */
    @Test
    void tailsOutsideTheNestAreGuardedAroundIt() {
        ComputeDAG dag = packedDense(DType.UINT8, DType.INT8, 7, 48, 16);
        Schedule sch = rowTiled(dag, 3, 2);
        int[] raw = guards(ScheduleLowering.lower("tail", sch.replay()));
        assertThat(raw[0]).as("guards inside the tensorized nest").isZero();
        assertThat(raw[1])
                .as("guards in all (the init's and the tail's around the nest)")
                .isPositive();
        NDArray x = LowPrecisionData.full(DType.UINT8, 5, 7, 16);
        NDArray w = LowPrecisionData.full(DType.INT8, 6, 48, 16);
        NDArray out = NDArray.allocate(DType.INT32, 7, 48);
        Interpreter.run(Lowering.lower("tail", sch), x, w, out);
        assertThat(out.toLongArray()).containsExactly(LowPrecisionData.denseInt(x, w));
    }

    /** A split on the way to a tensorized loop that leaves a tail is refused at schedule time, naming the loops. */
    @Test
    void refusesATailInsideTheNest() {
        // 48 columns in tiles of 32, each cut into 2 x 16: the last tile's columns 48..63 are
        // guarded by a test on the intrinsic's own loop
        ComputeDAG dag = packedDense(DType.UINT8, DType.INT8, 4, 48, 16);
        assertThatThrownBy(() -> {
                    ScheduleBuilder s = ScheduleBuilder.on(dag);
                    var c = s.stage("matmul_packed");
                    c.split("n", 32);
                    c.split("n.1", 16);
                    c.split("k", 4);
                    c.reorder("m", "n.0", "k.0", "n.1.0", "n.1.1", "k.1");
                    c.tensorize("n.1.1", TensorIntrinsics.VNNI_U8S8);
                })
                .isInstanceOf(ScheduleException.class)
                .satisfies(e -> System.out.println("refused: " + e.getMessage()))
                .hasMessageContaining("tensorize 'matmul_packed'")
                .hasMessageContaining("split of loop 'n' (extent 48)")
                .hasMessageContaining("leaves a tail")
                .hasMessageContaining("tensorized loop 'n.1.1'");
    }
    /**
     * A tensorized stage computed inside its consumer's tile: the consumer's columns in tiles of 16 leave the
     * intrinsic its 16 and the program exact; tiles of 8 shrink the tensorized loop to 8 by bound inference, which
     * the search's bound inference and the lowering refuse (before, the backend's compile did).
     */
    @Test
    void boundInferenceMustLeaveTheTensorizedLoopsWhole() {
        Tensor x = Te.placeholder("x", DType.UINT8, 4, 16);
        Tensor w = Te.placeholder("w", DType.INT8, 32, 16);
        Tensor mm = LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w));
        Tensor plus = Te.compute("plus", Te.shape(4, 32), (i, j) -> mm.at(i, j).add(1));
        ComputeDAG dag = ComputeDAG.of(plus);
        for (int tile : new int[] {16, 8}) {
            ScheduleBuilder s = tensorizing(dag, TensorIntrinsics.VNNI_U8S8, 4);
            var consumer = s.stage("plus");
            consumer.split("j", tile);
            consumer.reorder("i", "j.0", "j.1");
            s.stage("matmul_packed").computeAt(consumer, "j.0");
            LoopState state = s.state();
            if (tile == 16) {
                assertThat(ScheduleLowering.inferExtents(state)).isNotEmpty();
                NDArray xs = LowPrecisionData.full(DType.UINT8, 7, 4, 16);
                NDArray ws = LowPrecisionData.full(DType.INT8, 8, 32, 16);
                NDArray out = NDArray.allocate(DType.INT32, 4, 32);
                Interpreter.run(Lowering.lower("fused", s.build()), xs, ws, out);
                long[] want = LowPrecisionData.denseInt(xs, ws);
                for (int k = 0; k < want.length; k++) want[k] += 1;
                assertThat(out.toLongArray()).containsExactly(want);
            } else {
                for (var call : java.util.List.<org.assertj.core.api.ThrowableAssert.ThrowingCallable>of(
                        () -> ScheduleLowering.inferExtents(state), () -> ScheduleLowering.lower("fused", state))) {
                    assertThatThrownBy(call)
                            .isInstanceOf(ScheduleException.class)
                            .hasMessageContaining("tensorize 'matmul_packed'")
                            .hasMessageContaining("loop 'n.1' runs 8 iterations")
                            .hasMessageContaining("extent 16");
                }
            }
        }
    }
}
