package dev.kiln.jit;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Elementwise;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/**
 * Index arithmetic is generated in i64 (loop variables and constants widened where they enter an index), so LLVM can
 * fold a load's address into the addressing mode of an unrolled register tile. Before, an index was computed in i32
 * and sign-extended after its last add; LLVM's reassociation drops the adds' {@code nsw}, and for an index that mixes a
 * {@code floordiv} of the fused parallel loop with the inner loops every broadcast of the tile was recomputed ({@code
 * lea} + {@code movslq}) in the reduction loop: layer 3's 3x3 conv of ResNet-50 with its padding at root ran 1.55 ms
 * instead of 1.07 (docs/PERFORMANCE.md, twenty-ninth session). The same program shape, smaller: a 3x3 conv + bias +
 * relu (14x14, 64 -> 64 channels) with a 14 x 32 register tile, the padded input computed once at root and read at
 * {@code floordiv(fused, 2) * 7 + ...}; checked against plain Java (rtol, atol 1e-4: sums of 576 products of magnitude
 * under 1, FMA contraction on).
 */
class IndexWidthTest {
    private static final String STEPS = "[[\"CI\",5],[\"SP\",3,0,1,[1,1,1],1],[\"SP\",3,4,14,[7,1,1],1],"
            + "[\"SP\",3,8,14,[1,1,14],1],[\"SP\",3,12,64,[1,1,32],1],[\"SP\",3,16,3,[3],1],[\"SP\",3,18,3,[1],1],"
            + "[\"SP\",3,20,64,[32],1],[\"RE\",3,[0,4,8,12,1,5,9,13,16,18,20,2,6,10,14,17,19,21,3,7,11,15]],"
            + "[\"FSP\",6,0,1,2],[\"FSP\",6,3,2,2],[\"FSP\",6,6,3,2],[\"FSP\",6,9,4,2],"
            + "[\"RE\",6,[0,3,6,9,1,4,7,10,2,5,8,11]],[\"CA\",3,6,7],[\"FU\",6,[0,1,2,3]],[\"AN\",6,0,3],"
            + "[\"PR\",3,0,\"auto_unroll_max_step$0\"],[\"AN\",3,21,2]]";

    @Test
    void aRegisterTileReadingAPaddedInputAtAFusedLoopsFloordivAddressesWithoutSignExtensions() throws Exception {
        int h = 14, c = 64, co = 64;
        Tensor data = Te.placeholder("data", FLOAT32, 1, h, h, c);
        Tensor w = Te.placeholder("W", FLOAT32, 3, 3, c, co);
        Tensor b = Te.placeholder("b", FLOAT32, co);
        ComputeDAG dag = ComputeDAG.of(Activation.relu(Elementwise.biasAdd(Conv.conv2dNhwc(data, w, 1, 1), b, 3)));
        Schedule s = Schedule.fromSteps(new ObjectMapper().readTree(STEPS), dag);
        assertThat(Lowering.lower("probe", s).toString())
                .as("the padded input is computed at root and read at the fused loop's floordiv")
                .containsPattern("floordiv\\(i\\.0@j\\.0@k\\.0@l\\.0@, 2\\) \\* \\d+\\)");

        NDArray x = NDArray.random(FLOAT32, 1, 1, h, h, c);
        NDArray wt = NDArray.random(FLOAT32, 2, 3, 3, c, co);
        NDArray bias = NDArray.random(FLOAT32, 3, co);
        NDArray out = NDArray.allocate(FLOAT32, 1, h, h, co);
        AsmLoops.Loop hot;
        JitOptions contract = JitOptions.defaults().withFpContract(true);
        try (LlvmKernel k = JitCheck.BACKEND.compile(Lowering.lower("conv", s), JitCheck.TARGET, contract)) {
            k.call(x, wt, bias, out);
            hot = AsmLoops.hot(k.source(), "vfmadd231ps");
        }
        float[] xs = x.toFloatArray(), ws = wt.toFloatArray(), bs = bias.toFloatArray(), e = new float[h * h * co];
        for (int i = 0; i < h; i++)
            for (int j = 0; j < h; j++)
                for (int o = 0; o < co; o++) {
                    float acc = 0;
                    for (int rh = 0; rh < 3; rh++)
                        for (int rw = 0; rw < 3; rw++)
                            for (int r = 0; r < c; r++) {
                                int y = i + rh - 1, z = j + rw - 1;
                                if (y < 0 || y >= h || z < 0 || z >= h) continue;
                                acc += xs[(y * h + z) * c + r] * ws[((rh * 3 + rw) * c + r) * co + o];
                            }
                    e[(i * h + j) * co + o] = Math.max(acc + bs[o], 0f);
                }
        Comparison cmp = out.compareTo(NDArray.fromFloats(e, 1, h, h, co), 1e-4, 1e-4);
        assertThat(cmp.ok()).as(cmp.report()).isTrue();

        assertThat(hot).as("a loop of FMAs").isNotNull();
        System.out.println("3x3 conv tile, pad at root: " + hot);
        assertThat(hot.intrinsic()).as("28 accumulators per step in " + hot).isGreaterThanOrEqualTo(28);
        assertThat(hot.signExtensions()).as("sign extensions in " + hot).isZero();
        // per step: 14 broadcasts, 2 weight vectors, 28 FMAs and a few instructions of loop control
        assertThat(hot.instructions())
                .as("instructions besides the tile's in " + hot)
                .isLessThanOrEqualTo(hot.intrinsic() + hot.broadcasts() + hot.zmmLoads() + 8);
    }
}
