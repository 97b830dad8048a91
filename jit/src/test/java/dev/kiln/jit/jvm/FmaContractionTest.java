package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * FMA contraction on a fast-math JVM target ({@code CpuTarget.fastMath()}): a vectorized float {@code a * b + c} is
 * one {@code FloatVector.fma} (one rounding, the instruction {@code VectorGemm} uses); on an exact target it stays
 * {@code mul} then {@code add}, bit for bit the interpreter's. Numbers against the interpreter on seeded inputs.
 */
class FmaContractionTest {
    private static final int W = Math.max(2, Math.min(16, JvmCheck.TARGET.vectorBits() / 32));
    private static final CpuTarget FAST = JvmCheck.TARGET.withFastMath(true);

    /** How many calls of {@code FloatVector.name} (or {@code DoubleVector.name}) the kernel class makes. */
    private static int calls(JvmKernel k, String vectorClass, String name) {
        ClassNode cn = new ClassNode();
        new ClassReader(k.classFile()).accept(cn, 0);
        int n = 0;
        for (MethodNode m : cn.methods) {
            for (AbstractInsnNode i : m.instructions) {
                if (i instanceof MethodInsnNode c
                        && c.owner.equals("jdk/incubator/vector/" + vectorClass)
                        && c.name.equals(name)) {
                    n++;
                }
            }
        }
        return n;
    }

    private static JvmKernel run(PrimFunc f, CpuTarget target, long seed, double tol) {
        List<NDArray> args = JvmCheck.randomArgs(f, seed);
        try {
            return JvmCheck.matches(f, target, args, tol, tol);
        } finally {
            for (NDArray a : args) a.close();
        }
    }

    @Test
    void aFastMathTargetFusesTheTilesMultiplyAndAdd() {
        PrimFunc f = RegisterTilesTest.tunedLikeGemm(4 * W);
        JvmBackend.clearCache();
        JvmKernel exact = run(f, JvmCheck.TARGET, 3, 0);
        assertThat(calls(exact, "FloatVector", "fma")).isZero();
        assertThat(calls(exact, "FloatVector", "mul")).isPositive();
        // a sum of 4W products of values in [-1, 1): one rounding less per step, within 1e-4
        JvmKernel fast = run(f, FAST, 3, 1e-4);
        assertThat(fast.promotions()).anyMatch(p -> p.endsWith("keeps 8 vector(s) of 'C.local' in locals"));
        assertThat(calls(fast, "FloatVector", "fma")).isPositive();
        assertThat(calls(fast, "FloatVector", "mul"))
                .as("multiplies left unfused")
                .isZero();
        JvmBackend.clearCache();
    }

    @Test
    void onlyFloatMultiplyAddsAreFused() {
        int n = 8 * W;
        for (DType t : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.INT32}) {
            Tensor a = Te.placeholder("A", t, n), b = Te.placeholder("B", t, n), c = Te.placeholder("C", t, n);
            // a[i] * b[i] + c[i] (fused for floats), c[i] + a[i] * b[i] (the product second: fused too) and
            // a[i] + b[i] - c[i] (no product: never)
            ComputeDAG dag = ComputeDAG.of(
                    Te.compute("D", Te.shape(n), i -> a.at(i).mul(b.at(i)).add(c.at(i))),
                    Te.compute("E", Te.shape(n), i -> c.at(i).add(a.at(i).mul(b.at(i)))),
                    Te.compute("F", Te.shape(n), i -> a.at(i).add(b.at(i)).sub(c.at(i))));
            ScheduleBuilder s = ScheduleBuilder.on(dag);
            for (String st : new String[] {"D", "E", "F"}) s.stage(st).vectorize("i");
            PrimFunc f = Lowering.lower("fma_" + t.name().toLowerCase(java.util.Locale.ROOT), s.build());
            JvmBackend.clearCache();
            // one product and one add per element: fused or not, within a rounding of the interpreter
            JvmKernel k = run(f, FAST, 11, 1e-6);
            String cls = t == DType.FLOAT32 ? "FloatVector" : t == DType.FLOAT64 ? "DoubleVector" : "IntVector";
            if (t == DType.INT32) {
                assertThat(calls(k, cls, "fma")).as("int32").isZero();
                assertThat(calls(k, cls, "mul")).as("int32").isPositive();
            } else {
                assertThat(calls(k, cls, "fma")).as(t + " fused multiply-adds").isGreaterThanOrEqualTo(2);
                assertThat(calls(k, cls, "mul")).as(t + " multiplies left").isZero();
                assertThat(calls(k, cls, "add"))
                        .as(t + " the add without a product")
                        .isPositive();
            }
            JvmBackend.clearCache();
            assertThat(calls(run(f, JvmCheck.TARGET, 11, 0), cls, "fma"))
                    .as(t + " exact")
                    .isZero();
        }
        JvmBackend.clearCache();
    }
}
