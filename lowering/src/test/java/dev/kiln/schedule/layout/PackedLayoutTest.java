package dev.kiln.schedule.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The weight transform against plain loops written from the layout's definition. */
class PackedLayoutTest {

    /** A [4, 6] array packed as [b/3:2, a:4, b%3:3]: packed[x, y, z] = original[y, 3x + z]. */
    private static final PackedLayout LAYOUT = new PackedLayout(
            new long[] {4, 6},
            List.of(new PackedLayout.Dim(1, 3, 2), new PackedLayout.Dim(0, 1, 4), new PackedLayout.Dim(1, 1, 3)),
            List.of("a", "b"));

    @Test
    void packsByTheDefinition() {
        for (DType t : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.INT8, DType.INT64, DType.FLOAT16}) {
            NDArray a = NDArray.random(t, 7, 4, 6);
            NDArray p = LAYOUT.apply(a);
            assertThat(p.shape()).containsExactly(2, 4, 3);
            for (int x = 0; x < 2; x++) {
                for (int y = 0; y < 4; y++) {
                    for (int z = 0; z < 3; z++) {
                        assertThat(p.getDouble(x, y, z))
                                .as("%s [%d,%d,%d]", t, x, y, z)
                                .isEqualTo(a.getDouble(y, 3 * x + z));
                    }
                }
            }
        }
    }

    @Test
    void readsStridedArrays() {
        // a column-major [4, 6] array
        NDArray a = NDArray.allocateStrided(DType.FLOAT32, new long[] {4, 6}, new long[] {1, 4});
        for (int i = 0; i < 4; i++) for (int j = 0; j < 6; j++) a.setDouble(i * 10 + j, i, j);
        NDArray p = LAYOUT.apply(a);
        assertThat(p.getDouble(1, 2, 1)).isEqualTo(2 * 10 + 4);
        assertThat(p.getDouble(0, 3, 2)).isEqualTo(3 * 10 + 2);
    }

    @Test
    void indicesAndChecks() {
        assertThat(LAYOUT.toString()).isEqualTo("[b/3:2, a:4, b%3:3]");
        assertThat(LAYOUT.isIdentity()).isFalse();
        assertThat(new PackedLayout(
                                new long[] {4, 6},
                                List.of(new PackedLayout.Dim(0, 1, 4), new PackedLayout.Dim(1, 1, 6)),
                                List.of("a", "b"))
                        .isIdentity())
                .isTrue();
        // digits that skip a stride, or cover more than the axis, are refused
        assertThatThrownBy(() -> new PackedLayout(new long[] {6}, List.of(new PackedLayout.Dim(0, 2, 3)), List.of("a")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("mixed radix");
        assertThatThrownBy(() -> new PackedLayout(
                        new long[] {6},
                        List.of(new PackedLayout.Dim(0, 4, 2), new PackedLayout.Dim(0, 1, 4)),
                        List.of("a")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("not its extent 6");
        assertThatThrownBy(() -> LAYOUT.apply(NDArray.allocate(DType.FLOAT32, 6, 4)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("[4, 6]");
    }
}
