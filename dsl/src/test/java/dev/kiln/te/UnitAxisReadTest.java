package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.shape;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.TensorRead;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ComputeOp#readsUnitAxisAt}: index 0 on an axis of extent 1 stands for that axis. */
class UnitAxisReadTest {

    @Test
    void indexZeroOnAUnitAxisStandsForThatAxisAndNowhereElse() {
        // a broadcasting add over a batch of 1: the bias is read at [0, c], the batch axis of the add has extent 1
        Tensor x = placeholder("X", FLOAT32, 1, 8);
        Tensor bias = placeholder("Bias", FLOAT32, 1, 8);
        Tensor y = compute("Y", shape(1, 8), (n, c) -> x.at(n, c).add(bias.at(IntImm.i32(0), c)));
        ComputeOp op = (ComputeOp) y.op();
        List<Expr> biasIndex = reads(op.body(), "Bias");
        assertThat(op.readsUnitAxisAt(biasIndex.get(0), 0)).isTrue();
        // index 0 at a position whose axis is not of extent 1, or beyond the op's axes, or another constant: no
        assertThat(op.readsUnitAxisAt(IntImm.i32(0), 1)).isFalse();
        assertThat(op.readsUnitAxisAt(IntImm.i32(0), 2)).isFalse();
        assertThat(op.readsUnitAxisAt(IntImm.i32(1), 0)).isFalse();
        assertThat(op.readsUnitAxisAt(biasIndex.get(1), 1)).isFalse();
    }

    private static List<Expr> reads(Expr e, String tensor) {
        List<Expr> out = new ArrayList<>();
        dev.kiln.ir.Exprs.forEach(e, r -> {
            if (r instanceof TensorRead t && Tensor.of(t).name().equals(tensor)) out.addAll(t.indices());
        });
        return out;
    }
}
