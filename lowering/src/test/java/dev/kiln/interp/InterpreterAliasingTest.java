package dev.kiln.interp;

import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.shape;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/** {@code Interpreter.run} given one array (or two views of one memory) as an input and as an output. */
class InterpreterAliasingTest {
    private static final DType F32 = DType.FLOAT32;

    private static PrimFunc transpose(int n) {
        Tensor a = placeholder("A", F32, n, n);
        Tensor t = compute("T", shape(n, n), (i, j) -> a.at(j, i));
        return LowerDefault.lower("transpose", ComputeDAG.of(t));
    }

    @Test
    void theSameArrayAsInputAndOutputIsRejectedNamingBothParameters() {
        PrimFunc f = transpose(8);
        try (NDArray x = NDArray.random(F32, 3, 8, 8)) {
            float[] before = x.toFloatArray();
            assertThatThrownBy(() -> Interpreter.run(f, x, x))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("parameter 1 'T'")
                    .hasMessageContaining("parameter 0 'A'")
                    .hasMessageContaining("the same array was passed for both");
            assertThat(x.toFloatArray()).as("nothing ran").containsExactly(before);
        }
    }

    @Test
    void anOutputOverlappingAnInputThroughAnotherViewIsRejected() {
        PrimFunc f = transpose(4);
        try (NDArray x = NDArray.random(F32, 5, 4, 4)) {
            // a second array over the same memory, as a user gets from wrap(...)
            NDArray alias = NDArray.wrap(x.segment(), F32, new long[] {4, 4}, new long[] {4, 1});
            assertThatThrownBy(() -> Interpreter.compile(f).run(x, alias))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("'T'")
                    .hasMessageContaining("'A'")
                    .hasMessageContaining("share memory");
        }
    }

    @Test
    void separateArraysStillComputeTheTranspose() {
        PrimFunc f = transpose(5);
        try (NDArray x = NDArray.random(F32, 7, 5, 5);
                NDArray y = NDArray.allocate(F32, 5, 5)) {
            Interpreter.run(f, x, y);
            for (int i = 0; i < 5; i++) {
                for (int j = 0; j < 5; j++) assertThat(y.getDouble(i, j)).isEqualTo(x.getDouble(j, i));
            }
        }
    }
}
