package dev.kiln.jit.jvm;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.nn.Linalg;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import org.junit.jupiter.api.Test;

class SmokeTest {
    @Test
    void matmul() {
        var k = JvmCheck.exact(LowerDefault.lower("mm", ComputeDAG.of(Linalg.matmul(Te.placeholder("a", DType.FLOAT32, 7, 9),
                Te.placeholder("b", DType.FLOAT32, 9, 5)))), 1);
        System.out.println(k.source());
    }
}
