package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.codegen.CudaOptions;
import dev.kiln.cuda.codegen.Launch;
import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The hand-written Ansor-style GPU schedules of the lowering tests ({@link GpuSchedules}: matmul
 * and conv2d tiled "SSSRRSRS" with shared-memory fetches, vthreads, guards where tiles do not
 * divide) as CUDA: the launch configuration follows the bindings, the source has its shared
 * arrays, register tile and barriers, the interpreter agrees with the default lowering
 * (rtol = atol = 1e-4: tiling reorders the sums), and nvcc compiles every module for sm_90.
 */
class HandScheduleCudaTest {
    private static final List<String> MM_S = List.of("i", "j"), MM_R = List.of("k");
    private static final List<String> CONV_S = List.of("i", "j", "k", "l"), CONV_R = List.of("rc", "ry", "rx");

    record Case(String name, ComputeDAG dag, Schedule schedule) {}

    static GpuSchedules.Tiles tiles(int[][] s, int[][] r) {
        return new GpuSchedules.Tiles(s, r);
    }

    static List<Case> cases() {
        List<Case> out = new ArrayList<>();
        int[][][] mm = {
            {{16, 24, 12}, {1, 2, 2, 1}, {2, 2, 1, 2}, {2, 2}},
            {{15, 20, 9}, {1, 2, 2, 1}, {1, 4, 1, 3}, {2, 2}},
            {{32, 32, 32}, {2, 2, 2, 2}, {2, 4, 1, 2}, {4, 2}},
            {{9, 10, 8}, {1, 3, 1, 1}, {1, 2, 5, 1}, {1, 4}},
            {{128, 128, 64}, {1, 8, 2, 2}, {1, 16, 1, 4}, {4, 2}},
        };
        for (int[][] c : mm) {
            ComputeDAG dag = GpuSchedules.matmul(c[0][0], c[0][1], c[0][2]);
            out.add(new Case(
                    "matmul_" + c[0][0] + "x" + c[0][1] + "x" + c[0][2],
                    dag,
                    GpuSchedules.multiLevelTiling(
                            dag, "C", MM_S, MM_R, List.of("A", "B"), tiles(new int[][] {c[1], c[2]}, new int[][] {c[3]
                            }))));
        }
        ComputeDAG conv = GpuSchedules.conv2d(1, 3, 7, 7, 4, 3, 3, 1);
        out.add(new Case(
                "conv_inline_pad",
                conv,
                GpuSchedules.multiLevelTiling(
                        conv,
                        "conv",
                        CONV_S,
                        CONV_R,
                        List.of("pad", "kernel"),
                        List.of("pad"),
                        tiles(
                                new int[][] {{1, 1, 1, 1}, {1, 2, 1, 2}, {1, 7, 1, 1}, {1, 1, 7, 1}},
                                new int[][] {{1, 1}, {1, 3}, {3, 1}}))));
        ComputeDAG conv2 = GpuSchedules.conv2d(2, 5, 9, 6, 6, 3, 3, 1);
        out.add(new Case(
                "conv_odd",
                conv2,
                GpuSchedules.multiLevelTiling(
                        conv2,
                        "conv",
                        CONV_S,
                        CONV_R,
                        List.of("pad", "kernel"),
                        List.of("pad"),
                        tiles(
                                new int[][] {{1, 1, 1, 1}, {1, 3, 1, 2}, {1, 3, 1, 1}, {1, 2, 3, 1}},
                                new int[][] {{2, 1}, {1, 3}, {3, 1}}))));
        ComputeDAG conv3 = GpuSchedules.conv2d(1, 4, 5, 5, 2, 3, 3, 1);
        ScheduleBuilder b = ScheduleBuilder.on(conv3);
        GpuSchedules.tile(
                b,
                "conv",
                CONV_S,
                CONV_R,
                List.of("pad", "kernel"),
                tiles(
                        new int[][] {{1, 1, 1, 1}, {2, 1, 1, 1}, {1, 5, 1, 1}, {1, 5, 1, 1}},
                        new int[][] {{2, 1}, {1, 3}, {1, 3}}));
        GpuSchedules.bindElementwise(b.stage("pad"), 32);
        out.add(new Case("conv_pad_kernel", conv3, b.build()));
        return out;
    }

    @Test
    void interpreterAgreesWithTheDefaultLowering() {
        long seed = 40;
        for (Case c : cases()) {
            String diff =
                    GpuTesting.compareWithDefault(c.dag(), GpuTesting.lower(c.name(), c.schedule()), seed++, 1e-4);
            assertEquals(null, diff, c.name());
        }
    }

    @Test
    void matmulLaunchFollowsTheBindings() {
        // 128 x 128 in blocks of (8*2*2) x (16*1*4) = 32 x 64 rows/columns: 4 x 2 blocks of 8 x 16 threads, 2 vthreads.
        Case c = cases().get(4);
        CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()));
        Launch l = m.launches().getFirst();
        assertThat(l.grid()).containsExactly(8, 1, 1);
        assertThat(l.block()).containsExactly(128, 1, 1);
        String src = m.source();
        assertThat(src)
                .contains("__launch_bounds__(128)")
                .contains("(int)blockIdx.x")
                .contains("// vthread")
                .contains("__shared__ __align__(32) float A_shared[")
                .contains("__shared__ __align__(32) float B_shared[")
                .contains("float C_local[16] = {};");
        assertThat(src.split("__syncthreads\\(\\);", -1).length - 1).isGreaterThanOrEqualTo(2);
    }

    @Test
    void convWithPaddingKernelIsTwoLaunchesThroughATemporary() {
        Case c = cases().getLast();
        CudaModule m = CudaCodegen.generate(GpuTesting.lower(c.name(), c.schedule()));
        assertEquals(2, m.launches().size());
        assertEquals("pad", m.temporaries().getFirst().name());
        assertThat(m.launches().get(0).grid()).containsExactly(7, 1, 1);
        assertThat(m.launches().get(0).block()).containsExactly(32, 1, 1);
        assertThat(m.launches().get(1).block()).containsExactly(25, 1, 1);
        assertThat(m.launches().get(0).writes()).containsExactly(false, true);
    }

    @Test
    void everyHandScheduleCompilesWithNvcc() {
        GpuTesting.assumeNvcc();
        List<CudaModule> modules = new ArrayList<>();
        for (Case c : cases()) {
            PrimFunc f = GpuTesting.lower(c.name(), c.schedule());
            modules.add(CudaCodegen.generate(f));
            modules.add(CudaCodegen.generate(
                    new PrimFunc(c.name() + "_fast", f.params(), f.body()),
                    CudaOptions.defaults().withFastMath(true).withZeroSharedMemory(true)));
        }
        List<String> ptx = GpuTesting.compileWithNvcc(modules);
        String all = String.join("\n", ptx);
        assertThat(all).contains(".shared").contains("bar.sync");
        long entries = all.lines().filter(l -> l.startsWith(".visible .entry")).count();
        assertEquals(modules.stream().mapToInt(m -> m.launches().size()).sum(), entries);
    }
}
