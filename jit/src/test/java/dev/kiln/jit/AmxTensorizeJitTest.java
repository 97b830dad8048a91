package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/**
 * AMX tile kernels from the LLVM backend. On any machine: the generated code for a Sapphire Rapids target holds the
 * tile configuration ({@code ldtilecfg}, from LLVM's shapes), the tile loads and stores and the tile multiply, and a
 * host without AMX refuses to compile them for itself and to grant the tile state, by name. On a host with AMX the
 * kernels run and are checked: int8 exactly against plain Java, bf16 within the bound of bf16's 8-bit significand
 * ({@link TensorizeJitTest}); elsewhere those tests skip, saying why.
 */
class AmxTensorizeJitTest {
    private static final CpuTarget HOST = TensorizeFixture.HOST;

    /** A Sapphire Rapids target, to compile for where the host has no AMX (the kernel is never called). */
    private static final CpuTarget SPR = HOST.withCpu(
            "sapphirerapids",
            "+avx2,+fma,+f16c,+bmi,+bmi2,+avx512f,+avx512dq,+avx512cd,+avx512bw,+avx512vl,+avx512vnni,+avx512bf16,"
                    + "+amx-tile,+amx-bf16,+amx-int8");

    private final LlvmBackend llvm = new LlvmBackend();

    /** 16 x 16 tiles over m and n, the reduction by a tile's depth; the row tiles parallel. */
    static Schedule amxTiled(ComputeDAG dag, String intrinsic, int depth) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", 16);
        c.split("n", 16);
        c.split("k", depth);
        c.reorder("m.0", "n.0", "k.0", "m.1", "n.1", "k.1");
        c.tensorize("m.1", intrinsic);
        c.parallel("m.0");
        return s.build();
    }

    private static PrimFunc int8Kernel() {
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, 32, 48, 128);
        return Lowering.lower("amx_int8", amxTiled(dag, AmxTensorIntrinsics.AMX_U8S8, 64));
    }

    private static PrimFunc bf16Kernel() {
        ComputeDAG dag = TensorizeFixture.packedDense(DType.BFLOAT16, DType.BFLOAT16, 32, 32, 96);
        return Lowering.lower("amx_bf16", amxTiled(dag, AmxTensorIntrinsics.AMX_BF16, 32));
    }

    @Test
    void sapphireRapidsCodeConfiguresLoadsMultipliesAndStoresTiles() {
        assertThat(llvm.intrinsics(SPR)).contains(AmxTensorIntrinsics.AMX_BF16, AmxTensorIntrinsics.AMX_U8S8);
        try (CompiledKernel k = llvm.compile(bf16Kernel(), SPR)) {
            assertThat(k.source())
                    .contains("ldtilecfg")
                    .contains("tileloadd")
                    .contains("tdpbf16ps")
                    .contains("tilestored");
        }
        try (CompiledKernel k = llvm.compile(int8Kernel(), SPR)) {
            assertThat(k.source()).contains("ldtilecfg").contains("tdpbusd");
        }
    }

    @Test
    void aChainedTileKeepsItsAccumulatorInTheTileRegister() {
        // one 16 x 16 tile, two tdpbusd over 128 bytes of k: C loaded and stored once, A and B twice
        ComputeDAG dag = TensorizeFixture.packedDense(DType.UINT8, DType.INT8, 16, 16, 128);
        PrimFunc f = Lowering.lower("amx_chain", amxTiled(dag, AmxTensorIntrinsics.u8s8(2), 128));
        try (CompiledKernel k = llvm.compile(f, SPR)) {
            String asm = k.source().substring(k.source().indexOf("; ---- assembly"));
            assertThat(count(asm, "tdpbusd")).as(asm).isEqualTo(2);
            assertThat(count(asm, "tilestored")).as(asm).isEqualTo(1);
            assertThat(count(asm, "tileloadd")).as(asm).isEqualTo(5);
        }
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) n++;
        return n;
    }

    @Test
    void aHostWithoutAmxRefusesByName() {
        assumeTrue(!AmxPermission.hostHasAmx(), "this host has AMX (the kernels run in the tests below)");
        assertThat(llvm.intrinsics(HOST)).doesNotContain(AmxTensorIntrinsics.AMX_BF16, AmxTensorIntrinsics.AMX_U8S8);
        assertThatThrownBy(() -> llvm.compile(bf16Kernel(), HOST))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("amx-tile");
        assertThatThrownBy(AmxPermission::request)
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("XTILEDATA");
        // the refusal is kept: asked again, the same answer, no second system call needed
        assertThatThrownBy(AmxPermission::request)
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("errno");
    }

    @Test
    void int8TilesRunExactlyOnAnAmxHost() {
        TensorizeFixture.assumeIntrinsic(AmxTensorIntrinsics.AMX_U8S8);
        AmxPermission.request();
        NDArray x = TensorizeFixture.full(DType.UINT8, 41, 32, 128);
        NDArray w = TensorizeFixture.full(DType.INT8, 42, 48, 128);
        NDArray out = NDArray.allocate(DType.INT32, 32, 48);
        PrimFunc f = int8Kernel();
        try (CompiledKernel k = llvm.compile(f, HOST)) {
            k.call(x, w, out);
            assertThat(k.source()).contains("tdpbusd");
        }
        long[] got = out.toLongArray();
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 48; j++) {
                int acc = 0;
                for (int q = 0; q < 128; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                assertThat(got[i * 48 + j]).as("out[%d, %d]", i, j).isEqualTo(acc);
            }
        NDArray ref = NDArray.allocate(DType.INT32, 32, 48);
        Interpreter.run(f, x, w, ref);
        assertThat(ref.toLongArray()).containsExactly(got);
    }

    @Test
    void bf16TilesRunWithinTheBf16BoundOnAnAmxHost() {
        TensorizeFixture.assumeIntrinsic(AmxTensorIntrinsics.AMX_BF16);
        AmxPermission.request();
        TensorizeFixture.Bf16Inputs in = TensorizeFixture.Bf16Inputs.random(43, 44, 32, 32, 96);
        NDArray out = NDArray.allocate(DType.FLOAT32, 32, 32);
        try (CompiledKernel k = llvm.compile(bf16Kernel(), HOST)) {
            k.call(in.x(), in.w(), out);
            assertThat(k.source()).contains("tdpbf16ps");
        }
        in.assertWithinBound(out, 32, 32, 96);
    }
}
