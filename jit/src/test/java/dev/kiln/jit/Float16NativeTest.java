package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Var;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Linalg;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * float16 arithmetic on AVX-512 FP16 (Sapphire Rapids and later): one half-precision instruction of 32 lanes per
 * add, subtract, multiply or divide, a register tile's accumulators kept in half registers, and with FMA contraction
 * {@code vfmadd231ph}. The code is read for a Sapphire Rapids target on any machine; where the host has
 * {@code avx512fp16} the kernels run and match the interpreter bit for bit (float's 24-bit significand makes rounding
 * twice the same as rounding once for these operations), elsewhere that test skips saying why. Without the feature
 * float16 is computed in float32 registers, and the kernel's notes say so.
 */
class Float16NativeTest {
    private static final CpuTarget HOST = LlvmBackend.hostTarget();

    /** A Sapphire Rapids target with AVX-512 FP16, to compile for where the host has none (never called). */
    private static final CpuTarget SPR = HOST.withCpu(
            "sapphirerapids",
            "+avx2,+fma,+f16c,+bmi,+bmi2,+avx512f,+avx512dq,+avx512cd,+avx512bw,+avx512vl,+avx512vnni,+avx512bf16,"
                    + "+avx512fp16");

    private final LlvmBackend llvm = new LlvmBackend();

    /** {@code C = A . B} over float16 (the accumulation too): 8 x 32 register tiles, the reduction around them. */
    static PrimFunc halfMatmul(DType accumulate) {
        Tensor x = Te.placeholder("x", DType.FLOAT16, 32, 64);
        Tensor w = Te.placeholder("w", DType.FLOAT16, 64, 64);
        ComputeDAG dag = ComputeDAG.of(Linalg.matmul(x, w, false, false, accumulate));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var mm = s.stage("matmul");
        mm.split("i", 8);
        mm.split("j", 32);
        mm.reorder("i.0", "j.0", "k", "i.1", "j.1");
        mm.annotate("i.1", IterAnnotation.UNROLL);
        mm.annotate("j.1", IterAnnotation.VECTORIZE);
        return Lowering.lower("half_mm", s.build());
    }

    private static String assembly(LlvmKernel k) {
        return k.source().substring(k.source().indexOf("; ---- assembly"));
    }

    @Test
    void aFloat16RegisterTileStaysInHalfRegisters() {
        try (LlvmKernel k = llvm.compile(halfMatmul(DType.FLOAT16), SPR)) {
            String asm = assembly(k);
            assertThat(asm).as(asm).contains("vmulph").contains("vaddph");
            // no conversion at all: accumulators, loads, broadcasts and stores are half
            assertThat(asm).as(asm).doesNotContain("vcvtph2ps").doesNotContain("vcvtps2ph");
            assertThat(k.notes()).doesNotContain(Arith.EMULATED_HALF);
        }
        try (LlvmKernel k = llvm.compile(halfMatmul(DType.FLOAT16), SPR.withFastMath(true))) {
            assertThat(assembly(k)).contains("vfmadd231ph").doesNotContain("vmulph");
        }
    }

    @Test
    void float32AccumulationOfFloat16InputsWidensTheInputs() {
        // float16 operands, float32 sums (what oneDNN's f16 matmul computes): the inputs are widened, the FMAs are
        // float32 ones, whatever the target has
        try (LlvmKernel k = llvm.compile(halfMatmul(DType.FLOAT32), SPR.withFastMath(true))) {
            assertThat(assembly(k))
                    .contains("vcvtph2ps")
                    .contains("vfmadd231ps")
                    .doesNotContain("vfmadd231ph");
        }
    }

    @Test
    void withoutAvx512Fp16TheKernelSaysItComputesInFloat32() {
        CpuTarget noFp16 = HOST.withCpu("skylake-avx512", "+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl");
        try (LlvmKernel k = llvm.compile(halfMatmul(DType.FLOAT16), noFp16)) {
            assertThat(assembly(k)).doesNotContain("vmulph").doesNotContain("vaddph");
            assertThat(k.notes()).contains(Arith.EMULATED_HALF);
        }
    }

    @Test
    void onAHostWithAvx512Fp16TheHalfInstructionsMatchTheInterpreterExactly() {
        assumeTrue(
                HOST.hasFeature("avx512fp16"), "this host has no avx512fp16 (its float16 runs in float32 registers)");
        JitCheck.exact(halfMatmul(DType.FLOAT16), 5);
        // every operation on vectors and on scalars, seeded random halves
        Var j = new Var("j");
        Buffer a = buf("A", DType.FLOAT16, 100), b = buf("B", DType.FLOAT16, 100);
        Buffer sum = buf("S", DType.FLOAT16, 100), diff = buf("D", DType.FLOAT16, 100);
        Buffer prod = buf("P", DType.FLOAT16, 100), quot = buf("Q", DType.FLOAT16, 100);
        var body = Seq.of(
                store(sum, load(a, j).add(load(b, j)), j),
                store(diff, load(a, j).sub(load(b, j)), j),
                store(prod, load(a, j).mul(load(b, j)).mul(load(a, j)), j),
                store(quot, load(a, j).div(load(b, j)), j));
        List<Buffer> params = List.of(a, b, sum, diff, prod, quot);
        JitCheck.exact(new PrimFunc("half_ops_v", params, loop(j, 100, ForKind.VECTORIZED, body)), 6);
        JitCheck.exact(new PrimFunc("half_ops_s", params, loop(j, 100, ForKind.SERIAL, body)), 7);
    }
}
