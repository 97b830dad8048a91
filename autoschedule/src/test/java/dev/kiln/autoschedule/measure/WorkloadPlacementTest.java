package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.runtime.NDArray;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Random argument placement ({@code -Dkiln.measure.placement=random}): each allocation of a workload's arguments
 * lands at another offset past an aligned block, still aligned, with the same values.
 */
class WorkloadPlacementTest {
    private static final Buffer X = Buffer.rowMajor("x", DType.FLOAT32, List.of(1000L), MemoryScope.GLOBAL);
    private static final Buffer Y = Buffer.rowMajor("y", DType.FLOAT32, List.of(1000L), MemoryScope.GLOBAL);

    private static Workload workload() {
        return new Workload(List.of(ArgumentSpec.of(X, true), ArgumentSpec.of(Y, false)), 3, List.of());
    }

    private static Set<Long> offsets(Workload w, int n) {
        Set<Long> out = new HashSet<>();
        for (int k = 0; k < n; k++) {
            NDArray[] a = w.allocate(List.of(X, Y));
            try {
                for (NDArray x : a)
                    assertThat(x.segment().address() % NDArray.ALIGNMENT).isZero();
                for (int i = 0; i < 1000; i += 37)
                    assertThat(a[0].getDouble(i)).isEqualTo(w.inputs().get(0).getDouble(i));
                out.add(a[0].segment().address() % 65536);
            } finally {
                for (NDArray x : a) x.close();
            }
        }
        return out;
    }

    @Test
    void randomPlacementMovesTheArguments() {
        String before = System.getProperty(Workload.PLACEMENT_PROPERTY);
        System.setProperty(Workload.PLACEMENT_PROPERTY, "random");
        try (Workload w = workload()) {
            // 20 draws of 1024 offsets: fewer than 10 distinct ones would be a broken draw
            assertThat(offsets(w, 20)).hasSizeGreaterThanOrEqualTo(10);
        } finally {
            if (before == null) System.clearProperty(Workload.PLACEMENT_PROPERTY);
            else System.setProperty(Workload.PLACEMENT_PROPERTY, before);
        }
    }

    @Test
    void offsetsAreCheckedAndTheArrayIsWhole() {
        try (NDArray a = NDArray.allocateOffset(X, 64 * 7)) {
            assertThat(a.segment().address() % NDArray.ALIGNMENT).isZero();
            assertThat(a.segment().byteSize()).isEqualTo(4000);
            assertThat(a.getDouble(999)).isZero();
            a.setDouble(2.5, 999);
            assertThat(a.getDouble(999)).isEqualTo(2.5);
        }
        assertThatThrownBy(() -> NDArray.allocateOffset(X, 32))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("multiple of 64");
        assertThatThrownBy(() -> NDArray.allocateOffset(X, -64)).isInstanceOf(KilnException.class);
    }
}
