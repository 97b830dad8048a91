package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * LLVM may not unroll a loop nest around a tensorized body whole ({@link StmtGen#llvmUnrollSteps}): a loop of more
 * than 2,048 steps that holds a loop and a tensorized nest carries {@code llvm.loop.unroll.disable}, the loops inside
 * it do not, and a nest without intrinsics keeps LLVM's unrolling. Numbers are checked exactly against plain Java.
 */
class UnrollAroundIntrinsicsTest {
    private static final CpuTarget HOST = LlvmBackend.hostTarget();

    /** {@code k.0} (64) around {@code m} (32) around {@code n.0} (4) around the 16 x 4 intrinsic, or its loops. */
    private static PrimFunc program(boolean tensorize) {
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, 32, 64, 256);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("n", 16);
        c.split("k", 4);
        c.reorder("k.0", "m", "n.0", "n.1", "k.1");
        if (tensorize) c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
        return Lowering.lower("nest", s.build());
    }

    private static int count(String text, String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(text);
        int n = 0;
        while (m.find()) n++;
        return n;
    }

    @Test
    void onlyTheLoopsOverTheLimitAroundAnIntrinsicKeepLlvmFromUnrolling() {
        String why = TensorIntrinsics.get(TensorIntrinsics.VNNI_U8S8).unavailableReason(HOST);
        assumeTrue(why == null, why);
        String ir = KernelGen.generate(program(true), HOST, JitOptions.defaults(), "nest")
                .ir();
        // k.0 (64 x 32 x 4 = 8,192 steps) only: m (128 steps) and n.0 stay LLVM's to unroll
        assertThat(count(ir, "!llvm.loop ")).as(ir).isEqualTo(1);
        assertThat(ir).contains("!{!\"llvm.loop.unroll.disable\"}");
        String plain = KernelGen.generate(program(false), HOST, JitOptions.defaults(), "nest")
                .ir();
        assertThat(plain).doesNotContain("llvm.loop");

        NDArray x = TensorizeFixture.full(DType.UINT8, 3, 32, 256);
        NDArray w = TensorizeFixture.full(DType.INT8, 4, 64, 256);
        NDArray out = NDArray.allocate(DType.INT32, 32, 64);
        try (LlvmKernel k = new LlvmBackend().compile(program(true), HOST)) {
            k.call(x, w, out);
            // unrolled whole it would hold 8,192 copies of the instruction
            assertThat(count(k.source(), "vpdpbusd")).isLessThan(1024);
        }
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 64; j++) {
                int acc = 0;
                for (int q = 0; q < 256; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
            }
    }
}
