package dev.kiln.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kiln.ir.DType;
import dev.kiln.jit.jvm.JvmKernel;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import org.junit.jupiter.api.Test;

/**
 * BackendsBench's conv schedules on both CPU backends against a plain-Java direct convolution (double
 * accumulation) on seeded random inputs: float32 sums of 576 products of values in [-1, 1), within
 * 1e-5 per term.
 */
class BackendsBenchSchedulesTest {
    static final VectorConv.Shape S = BackendsBench.RESNET_CONV;

    @Test
    void registerTiledConvMatchesPlainJavaOnTheJvmBackend() {
        JvmKernel k = (JvmKernel) check(BackendsBench.conv2dSchedule(), Target.jvm());
        // the 4 pixels x 4 vectors tile is kept in locals across the reduction
        assertFalse(k.promotions().isEmpty(), "no accumulators promoted: " + k.notes());
    }

    @Test
    void registerTiledConvMatchesPlainJavaOnTheLlvmBackend() {
        check(BackendsBench.conv2dSchedule(), Target.cpu());
    }

    @Test
    void naiveConvMatchesPlainJavaOnTheJvmBackend() {
        check(BackendsBench.conv2dNaiveSchedule(), Target.jvm());
    }

    private static CompiledKernel check(Schedule s, CpuTarget target) {
        NDArray data = NDArray.random(DType.FLOAT32, 3, 1, 56, 56, 64);
        NDArray weight = NDArray.random(DType.FLOAT32, 4, 3, 3, 64, 64);
        NDArray out = NDArray.allocate(DType.FLOAT32, 1, 56, 56, 64);
        CompiledKernel k = Backend.forTarget(target).compile(Lowering.lower("conv", s), target);
        k.call(data, weight, out);
        float[] in = data.toFloatArray(), w = weight.toFloatArray(), got = out.toFloatArray();
        int terms = S.kh() * S.kw() * S.ci();
        for (int y = 0; y < S.oh(); y++) {
            for (int x = 0; x < S.ow(); x++) {
                for (int oc = 0; oc < S.co(); oc++) {
                    double ref = 0;
                    for (int r = 0; r < S.kh(); r++) {
                        for (int q = 0; q < S.kw(); q++) {
                            int iy = y + r - S.pad(), ix = x + q - S.pad();
                            if (iy < 0 || iy >= S.h() || ix < 0 || ix >= S.w()) continue;
                            for (int c = 0; c < S.ci(); c++) {
                                ref += (double) in[(iy * S.w() + ix) * S.ci() + c]
                                        * w[((r * S.kw() + q) * S.ci() + c) * S.co() + oc];
                            }
                        }
                    }
                    float v = got[(y * S.ow() + x) * S.co() + oc];
                    assertEquals(ref, v, 1e-5 * terms, target + ": out[0, " + y + ", " + x + ", " + oc + "]");
                }
            }
        }
        for (NDArray a : new NDArray[] {data, weight, out}) a.close();
        return k;
    }
}
