package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import org.junit.jupiter.api.Test;

/** A measured output's tolerances: one unit in the last place of a 16-bit float output, one step of a rounded int. */
class ArgumentSpecTest {
    @Test
    void sixteenBitFloatOutputsMayLandOnTheNeighbouringValue() {
        long[] shape = {4};
        assertThat(new ArgumentSpec("y", DType.BFLOAT16, shape, false).rtol(1e-3))
                .isEqualTo(0x1p-7);
        assertThat(new ArgumentSpec("y", DType.FLOAT16, shape, false).rtol(1e-4))
                .isEqualTo(0x1p-10);
        assertThat(new ArgumentSpec("y", DType.FLOAT32, shape, false).rtol(1e-3))
                .isEqualTo(1e-3);
        assertThat(new ArgumentSpec("y", DType.BFLOAT16, shape, false).rtol(0.1))
                .isEqualTo(0.1);
        assertThat(new ArgumentSpec("q", DType.UINT8, shape, false, true).atol(1e-3))
                .isEqualTo(1);
        assertThat(new ArgumentSpec("q", DType.UINT8, shape, false, false).atol(1e-3))
                .isEqualTo(1e-3);
    }
}
