package dev.kiln.jit;

import static dev.kiln.te.Te.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;

class JitSmokeTest {
    @Test
    void matmul() {
        int n = 37;
        Tensor a = placeholder("A", DType.FLOAT32, n, n);
        Tensor b = placeholder("B", DType.FLOAT32, n, n);
        Tensor c = compute("C", shape(n, n), (i, j) -> sum(n, k -> a.at(i, k).mul(b.at(k, j))));
        PrimFunc f = LowerDefault.lower("mm", List.of(a, b, c));
        try (LlvmKernel k = new LlvmBackend().compile(f, Target.cpu());
             NDArray x = NDArray.random(DType.FLOAT32, 1, n, n);
             NDArray y = NDArray.random(DType.FLOAT32, 2, n, n);
             NDArray z = NDArray.allocate(DType.FLOAT32, n, n)) {
            System.out.println(k.generatedIr());
            System.out.println(k.compileTimes());
            k.call(x, y, z);
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    float s = 0;
                    for (int q = 0; q < n; q++) s += (float) x.getDouble(i, q) * (float) y.getDouble(q, j);
                    assertEquals(s, z.getDouble(i, j), 1e-4);
                }
            }
        }
    }
}
