package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/**
 * The CPU tensor intrinsics compiled by the LLVM backend: AVX-512 VNNI (int8, exact against plain
 * Java in int32) and AVX-512 BF16 (against a float32 reference on the unrounded inputs, within the
 * bound bf16's 8-bit significand gives: each input rounds with relative error at most u = 2^-8, a
 * product of two at most 2u + u^2, and the float32 sum of K terms adds at most K * 2^-24; so
 * |out - ref| &lt;= (2u + u^2 + K 2^-24) * sum_k |a_k b_k|). Each test skips, naming the missing
 * feature, on a CPU without the instruction.
 */
class TensorizeJitTest {
    private static final CpuTarget HOST = TensorizeFixture.HOST;
    private final LlvmBackend llvm = new LlvmBackend();

    /** Register tile of 2 rows x 2 x 16 columns around the intrinsic; outer rows parallel; unrolled. */
    static Schedule tiled(ComputeDAG dag, String intrinsic, int group) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", 2);
        c.split("n", 2, 16);
        c.split("k", group);
        c.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "n.2", "k.1");
        c.tensorize("n.2", intrinsic);
        c.parallel("m.0");
        c.unroll("m.1");
        c.unroll("n.1");
        return s.build();
    }

    private void assume(String intrinsic) {
        TensorizeFixture.assumeIntrinsic(intrinsic);
        assertThat(llvm.intrinsics(HOST)).contains(intrinsic);
    }

    @Test
    void vnniDenseIsExact() {
        assume(TensorIntrinsics.VNNI_U8S8);
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, 6, 64, 96);
        Schedule sch = tiled(dag, TensorIntrinsics.VNNI_U8S8, 4);
        NDArray x = TensorizeFixture.full(DType.UINT8, 11, 6, 96);
        NDArray w = TensorizeFixture.full(DType.INT8, 12, 64, 96);
        NDArray out = NDArray.allocate(DType.INT32, 6, 64);
        PrimFunc f = Lowering.lower("vnni", sch);
        try (CompiledKernel k = llvm.compile(f, HOST)) {
            k.call(x, w, out);
            assertThat(k.source()).contains("vpdpbusd");
        }
        long[] got = out.toLongArray();
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 64; j++) {
                int acc = 0;
                for (int q = 0; q < 96; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                assertThat(got[i * 64 + j]).as("out[%d, %d]", i, j).isEqualTo(acc);
            }
        NDArray ref = NDArray.allocate(DType.INT32, 6, 64);
        Interpreter.run(f, x, w, ref);
        assertThat(ref.toLongArray()).containsExactly(got);
    }

    @Test
    void bf16DenseWithinTheBf16Bound() {
        assume(TensorIntrinsics.BF16_DOT);
        int m = 4, n = 32, kk = 128;
        ComputeDAG dag = TensorizeFixture.packedDense(DType.BFLOAT16, DType.BFLOAT16, m, n, kk);
        TensorizeFixture.Bf16Inputs in = TensorizeFixture.Bf16Inputs.random(21, 22, m, n, kk);
        NDArray out = NDArray.allocate(DType.FLOAT32, m, n);
        try (CompiledKernel k = llvm.compile(Lowering.lower("bf16", tiled(dag, TensorIntrinsics.BF16_DOT, 2)), HOST)) {
            k.call(in.x(), in.w(), out);
            assertThat(k.source()).contains("dpbf16ps");
        }
        in.assertWithinBound(out, m, n, kk);
    }

    @Test
    void aTargetWithoutTheFeatureIsRefusedByName() {
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, 2, 32, 8);
        PrimFunc f = Lowering.lower("vnni", tiled(dag, TensorIntrinsics.VNNI_U8S8, 4));
        CpuTarget noVnni = HOST.withCpu("x86-64-v3", "+avx2,+fma");
        assertThat(llvm.intrinsics(noVnni)).isEmpty();
        assertThatThrownBy(() -> llvm.compile(f, noVnni))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("avx512vnni");
        assertThatThrownBy(() -> new dev.kiln.jit.jvm.JvmBackend().compile(f, dev.kiln.jit.jvm.JvmTarget.jvm()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("no tensor intrinsics");
        assertThat(Target.cpu()).isNotNull();
    }
}
