package dev.kiln.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * storage_block ({@link StorageBlockStep}): a packed copy stored as panels of the register tile's width computes the
 * same values (bit for bit, the order of every operation is unchanged) with the panel layout, its reads become plain
 * loop indices, and the step replays, round-trips and refuses what it cannot do.
 */
class StorageBlockTest {
    private static final ComputeDAG DAG = Workloads.matmul(40, 48, 36);

    /**
     * C = A x B tiled {@code i.0 k.0 j.0 i.1 k.1 j.1} (i by 4, j by {@code jTile}, k by 12), with B's {@code k.1 x j}
     * block (12 x 48) copied at k.0, its column loop split by {@code copySplit} (0: not split); {@code block} applies
     * the storage_block of B's copy on dimension 1 with that factor (null: none).
     */
    private static Schedule tiled(int jTile, Integer block, int copySplit) {
        ScheduleBuilder s = ScheduleBuilder.on(DAG);
        var c = s.stage("C");
        c.split("i", 4);
        c.split("j", jTile);
        c.split("k", 12);
        c.reorder("i.0", "k.0", "j.0", "i.1", "k.1", "j.1");
        var b = s.stage("B").cacheRead("local", c).computeAt(c, "k.0");
        if (copySplit > 0) b.split("ax1", copySplit);
        if (block != null) b.storageBlock(1, block);
        return s.build();
    }

    private static PrimFunc lower(Schedule s) {
        return Lowering.lower("f", s);
    }

    /** Runs both programs in the interpreter on the same seeded inputs and requires bit-identical outputs. */
    private static void assertSameResults(PrimFunc expected, PrimFunc actual) {
        for (long seed = 1; seed <= 2; seed++) {
            List<NDArray> a = new ArrayList<>(), b = new ArrayList<>();
            for (int i = 0; i < expected.params().size(); i++) {
                a.add(NDArray.allocate(expected.params().get(i)).fillRandom(seed * 31 + i));
                b.add(NDArray.allocate(actual.params().get(i)).fillRandom(seed * 31 + i));
            }
            Interpreter.run(expected, a.toArray(NDArray[]::new));
            Interpreter.run(actual, b.toArray(NDArray[]::new));
            for (int i = 0; i < a.size(); i++) b.get(i).assertClose(a.get(i), 0, 0);
        }
    }

    @Test
    void aCopyBlockedByTheReadersTileIsStoredAsPanelsAndComputesTheSame() {
        PrimFunc plain = lower(tiled(16, null, 16));
        PrimFunc panels = lower(tiled(16, 0, 16));
        String text = panels.toString();
        // 48 columns in 3 panels of 16, each 12 rows deep: the reader's load walks one panel with plain indices
        assertThat(text).contains("allocate B.local: float32[576]");
        assertThat(text).contains("B.local[(((j.0 * 192) + (k.1 * 16)) + j.1)]");
        assertThat(text).doesNotContain("floordiv").doesNotContain("floormod");
        assertSameResults(plain, panels);
    }

    @Test
    void theDerivedBlockFollowsTheReadersTileWhenItChanges() {
        String eight = ScheduleLowering.lower("f", tiled(8, 0, 8).replay()).toString();
        String sixteen = ScheduleLowering.lower("f", tiled(16, 0, 16).replay()).toString();
        assertThat(eight).contains("allocate B.local: float32[6, 12, 8]");
        assertThat(sixteen).contains("allocate B.local: float32[3, 12, 16]");
    }

    @Test
    void anExplicitBlockThatDoesNotDivideTheExtentPadsTheLastPanel() {
        PrimFunc plain = lower(tiled(16, null, 0));
        Schedule padded = tiled(16, 20, 0);
        assertThat(ScheduleLowering.lower("f", padded.replay()).toString())
                .contains("allocate B.local: float32[3, 12, 20]");
        assertSameResults(plain, lower(padded));
    }

    @Test
    void theLeftOperandBlockedOnItsRows() {
        ScheduleBuilder s = ScheduleBuilder.on(DAG);
        var c = s.stage("C");
        c.split("i", 4);
        c.split("j", 16);
        c.split("k", 12);
        c.reorder("i.0", "k.0", "j.0", "i.1", "k.1", "j.1");
        s.stage("A").cacheRead("local", c).computeAt(c, "k.0").storageBlock(0, 2);
        Schedule sch = s.build();
        // the 4 x 12 block of A at k.0 as two row pairs, each 12 steps of 2 rows
        assertThat(ScheduleLowering.lower("f", sch.replay()).toString())
                .contains("allocate A.local: float32[2, 12, 2]");
        assertSameResults(lower(tiled(16, null, 0)), lower(sch));
    }

    @Test
    void theStepReplaysAndRoundTripsThroughJsonAndJavaSource() throws Exception {
        Schedule sch = tiled(16, 0, 16);
        assertThat(sch.steps()).contains(new StorageBlockStep(2, 1, 0));
        assertThat(Schedule.fromJson(sch.toJson(), DAG)).isEqualTo(sch);
        assertThat(sch.toJson()).contains("[\"SB\",2,1,0]");
        String body = sch.toJavaSource();
        assertThat(body).contains(".storageBlock(1, 0);");
        String src = "package gen; import dev.kiln.schedule.*; import dev.kiln.te.ComputeDAG;\n"
                + "public class Rebuild implements java.util.function.Function<ComputeDAG, Schedule> {\n"
                + "  public Schedule apply(ComputeDAG dag) {\n" + body + "    return schedule;\n  }\n}\n";
        assertThat(JavaSourceTest.compileAndRun(src).apply(DAG)).isEqualTo(sch);
        assertThat(sch.replay().stage(2).storageBlock()).isEqualTo(new Stage.StorageBlock(1, 0));
    }

    @Test
    void whatItCannotDoIsRefusedNamingTheStage() {
        ScheduleBuilder s = ScheduleBuilder.on(DAG);
        var c = s.stage("C");
        var b = s.stage("B").cacheRead("local", c).computeAt(c, "k");
        var e = assertThrows(ScheduleException.class, () -> b.storageBlock(2, 4));
        assertThat(e).hasMessageContaining("B.local").hasMessageContaining("2 dimensions");
        e = assertThrows(ScheduleException.class, () -> b.storageBlock(1, -1));
        assertThat(e).hasMessageContaining("B.local").hasMessageContaining("factor >= 0");
        b.storageAlign(0, 8, 1);
        e = assertThrows(ScheduleException.class, () -> b.storageBlock(1, 4));
        assertThat(e).hasMessageContaining("B.local").hasMessageContaining("padded or blocked");

        e = assertThrows(ScheduleException.class, () -> c.storageBlock(1, 4));
        assertThat(e).hasMessageContaining("'C'").hasMessageContaining("output of the function");

        // a stencil reads its input at i, i + 1 and i + 2: no one axis indexes it, so the tile cannot give the block
        ScheduleBuilder t = ScheduleBuilder.on(Workloads.stencil(30));
        var stencilB = t.stage("B");
        e = assertThrows(ScheduleException.class, () -> stencilB.storageBlock(0, 0));
        assertThat(e).hasMessageContaining("'B'").hasMessageContaining("give the factor");
        stencilB.storageBlock(0, 8); // an explicit block is fine
        assertSameResults(lower(Schedule.empty(Workloads.stencil(30))), lower(t.build()));
    }
}
