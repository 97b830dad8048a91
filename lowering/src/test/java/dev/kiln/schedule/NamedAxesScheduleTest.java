package dev.kiln.schedule;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.names;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/** Axis names chosen by the user are the loop names of schedules, printed programs and messages. */
class NamedAxesScheduleTest {
    private static final int M = 24, N = 20, K = 12;

    private static ComputeDAG namedMatmul() {
        Tensor a = placeholder("A", FLOAT32, M, K);
        Tensor b = placeholder("B", FLOAT32, K, N);
        IterVar k = reduceAxis(K, "red");
        return ComputeDAG.of(compute(
                "C",
                shape(M, N),
                names("row", "col"),
                (row, col) -> sum(k, a.at(row, k).mul(b.at(k, col)))));
    }

    /** Plain Java reference, in double. */
    private static double[] reference(NDArray a, NDArray b) {
        double[] c = new double[M * N];
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int r = 0; r < K; r++) s += a.getDouble(i, r) * b.getDouble(r, j);
                c[i * N + j] = s;
            }
        }
        return c;
    }

    @Test
    void aScheduleByTheUsersNamesComputesTheMatmul() {
        ComputeDAG dag = namedMatmul();
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        assertThat(c.loops().stream().map(ScheduleBuilder.Loop::name)).containsExactly("row", "col", "red");
        c.split("row", 8);
        c.split("col", 4);
        c.reorder("row.0", "col.0", "red", "row.1", "col.1");
        c.parallel(c.fuse("row.0", "col.0"));
        c.vectorize("col.1");
        Schedule schedule = s.build();
        assertThat(schedule.toJavaSource()).contains("\"row\"").contains("\"col.1\"");
        PrimFunc f = Lowering.lower("named", schedule);
        assertThat(f.toString()).contains("row.1").contains("red");

        NDArray a = NDArray.random(FLOAT32, 11, M, K);
        NDArray b = NDArray.random(FLOAT32, 12, K, N);
        NDArray out = NDArray.allocate(FLOAT32, M, N);
        Interpreter.run(f, a, b, out);
        double[] ref = reference(a, b);
        for (int i = 0; i < M * N; i++) {
            // float32 accumulation of 12 products of values in [-1, 1): 1e-5 relative plus 1e-5 absolute
            assertThat(out.getDoubleFlat(i))
                    .isCloseTo(ref[i], org.assertj.core.data.Offset.offset(1e-5 + 1e-5 * Math.abs(ref[i])));
        }
        // and a JSON round trip replays onto the same names
        assertThat(Schedule.fromJson(schedule.toJson(), dag)
                        .replay()
                        .stage(dag.ops().size() - 1)
                        .iters()
                        .stream()
                        .map(Iter::name))
                .contains("row.1", "col.1", "red");
    }

    @Test
    void errorMessagesUseTheUsersNames() {
        var c = ScheduleBuilder.on(namedMatmul()).stage("C");
        dev.kiln.ir.KilnException e = assertThrows(dev.kiln.ir.KilnException.class, () -> c.split("i", 4));
        assertThat(e.getMessage()).contains("no loop named 'i'").contains("[row, col, red]");
        ScheduleException fuse = assertThrows(ScheduleException.class, () -> c.fuse("row", "red"));
        assertThat(fuse.getMessage()).contains("fuse(C, [0, 2])").contains("not adjacent");
    }

    @Test
    void aDefaultAxisRenamedForAReduceAxisIsScheduledByItsNewName() {
        Tensor a = placeholder("A", FLOAT32, 2, 6, 5);
        Tensor b = placeholder("B", FLOAT32, 2, 5, 8);
        IterVar k = reduceAxis(5, "k");
        Tensor c =
                compute("C", shape(2, 6, 8), (x, y, z) -> sum(k, a.at(x, y, k).mul(b.at(x, k, z))));
        ComputeDAG dag = ComputeDAG.of(c);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        s.stage("C").split("l", 4);
        s.stage("C").split("k", 5);
        PrimFunc f = Lowering.lower("bmm", s.build());
        NDArray na = NDArray.random(FLOAT32, 3, 2, 6, 5);
        NDArray nb = NDArray.random(FLOAT32, 4, 2, 5, 8);
        NDArray out = NDArray.allocate(FLOAT32, 2, 6, 8);
        Interpreter.run(f, na, nb, out);
        for (int p = 0; p < 2; p++) {
            for (int i = 0; i < 6; i++) {
                for (int j = 0; j < 8; j++) {
                    double ref = 0;
                    for (int r = 0; r < 5; r++) ref += na.getDouble(p, i, r) * nb.getDouble(p, r, j);
                    assertThat(out.getDouble(p, i, j)).isCloseTo(ref, org.assertj.core.data.Offset.offset(1e-5));
                }
            }
        }
    }
}
