package dev.kiln.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Hand-written Ansor-style GPU schedules (see {@link GpuSchedules}) go through the GPU lowering
 * pipeline ({@link GpuPasses#pipeline}), pass verification, and give the reference's numbers in
 * the interpreter, which runs thread-bound loops one after another. Inputs are seeded uniform [-1, 1); float32 results
 * are compared with a plain-Java reference computed in float64 (stored as float32) within rtol 1e-4
 * and atol 1e-4.
 */
class GpuScheduleTest {
    private static final double TOL = 1e-4;

    static PrimFunc lowerGpu(String name, Schedule s) {
        return GpuPasses.lower(name, s, GpuLimits.h200(), Lowering.Options.defaults());
    }

    static GpuSchedules.Tiles tiles(int[][] spatial, int[][] reduce) {
        return new GpuSchedules.Tiles(spatial, reduce);
    }

    // ---- matmul ----------------------------------------------------------------------------

    private static void checkMatmul(int m, int n, int k, GpuSchedules.Tiles t, long seed) {
        ComputeDAG dag = GpuSchedules.matmul(m, n, k);
        Schedule s = GpuSchedules.multiLevelTiling(dag, "C", List.of("i", "j"), List.of("k"), List.of("A", "B"), t);
        PrimFunc f = lowerGpu("matmul", s);
        NDArray a = NDArray.random(DType.FLOAT32, seed, m, k);
        NDArray b = NDArray.random(DType.FLOAT32, seed + 1, k, n);
        NDArray c = NDArray.allocate(DType.FLOAT32, m, n);
        Interpreter.run(f, a, b, c);
        NDArray ref = NDArray.allocate(DType.FLOAT32, m, n);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int r = 0; r < k; r++) acc += a.getDouble(i, r) * b.getDouble(r, j);
                ref.setDouble(acc, i, j);
            }
        }
        c.assertClose(ref, TOL, TOL);
    }

    @Test
    void matmulWithVthreadAndDividingTiles() {
        checkMatmul(16, 24, 12, tiles(new int[][] {{1, 2, 2, 1}, {2, 2, 1, 2}}, new int[][] {{2, 2}}), 11);
    }

    @Test
    void matmulOddSizesWithTilesThatDoNotDivide() {
        // 15 rows in tiles of 4, 20 columns in tiles of 12, k = 9 in steps of 4: guards everywhere.
        checkMatmul(15, 20, 9, tiles(new int[][] {{1, 2, 2, 1}, {1, 4, 1, 3}}, new int[][] {{2, 2}}), 12);
    }

    @Test
    void matmulWithFourVthreadsAndEightThreads() {
        checkMatmul(32, 32, 32, tiles(new int[][] {{2, 2, 2, 2}, {2, 4, 1, 2}}, new int[][] {{4, 2}}), 13);
    }

    @Test
    void matmulFetchThatDoesNotFillTheLastRound() {
        // 6 threads fetch A tiles of 3 x 4 = 12 (two rounds) and B tiles of 4 x 10 = 40 (7 rounds, the last partial).
        checkMatmul(9, 10, 8, tiles(new int[][] {{1, 3, 1, 1}, {1, 2, 5, 1}}, new int[][] {{1, 4}}), 14);
    }

    // ---- conv2d ----------------------------------------------------------------------------

    private static NDArray conv2dReference(NDArray data, NDArray kernel, int pad) {
        long[] ds = data.shape(), ks = kernel.shape();
        int n = (int) ds[0], c = (int) ds[1], h = (int) ds[2], w = (int) ds[3];
        int f = (int) ks[0], kh = (int) ks[2], kw = (int) ks[3];
        int oh = h + 2 * pad - kh + 1, ow = w + 2 * pad - kw + 1;
        NDArray out = NDArray.allocate(DType.FLOAT32, n, f, oh, ow);
        for (int b = 0; b < n; b++) {
            for (int ff = 0; ff < f; ff++) {
                for (int y = 0; y < oh; y++) {
                    for (int x = 0; x < ow; x++) {
                        double acc = 0;
                        for (int rc = 0; rc < c; rc++) {
                            for (int ry = 0; ry < kh; ry++) {
                                for (int rx = 0; rx < kw; rx++) {
                                    int iy = y + ry - pad, ix = x + rx - pad;
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    acc += data.getDouble(b, rc, iy, ix) * kernel.getDouble(ff, rc, ry, rx);
                                }
                            }
                        }
                        out.setDouble(acc, b, ff, y, x);
                    }
                }
            }
        }
        return out;
    }

    private static void checkConv(PrimFunc f, int n, int c, int h, int w, int ff, int kh, int kw, int pad, long seed) {
        NDArray data = NDArray.random(DType.FLOAT32, seed, n, c, h, w);
        NDArray kernel = NDArray.random(DType.FLOAT32, seed + 1, ff, c, kh, kw);
        NDArray out = NDArray.allocate(DType.FLOAT32, n, ff, h + 2 * pad - kh + 1, w + 2 * pad - kw + 1);
        Interpreter.run(f, data, kernel, out);
        out.assertClose(conv2dReference(data, kernel, pad), TOL, TOL);
    }

    private static final List<String> CONV_SPATIAL = List.of("i", "j", "k", "l");
    private static final List<String> CONV_REDUCE = List.of("rc", "ry", "rx");

    @Test
    void conv2dWithPaddingInlinedIntoTheSharedFetch() {
        ComputeDAG dag = GpuSchedules.conv2d(1, 3, 7, 7, 4, 3, 3, 1);
        GpuSchedules.Tiles t = tiles(
                new int[][] {{1, 1, 1, 1}, {1, 2, 1, 2}, {1, 7, 1, 1}, {1, 1, 7, 1}},
                new int[][] {{1, 1}, {1, 3}, {3, 1}});
        Schedule s = GpuSchedules.multiLevelTiling(
                dag, "conv", CONV_SPATIAL, CONV_REDUCE, List.of("pad", "kernel"), List.of("pad"), t);
        PrimFunc f = lowerGpu("conv", s);
        assertEquals(1, GpuKernel.find(f.body()).size());
        // Per block: 1 x 1 x 9 x 9 padded inputs of one channel, all 4 x 1 x 3 x 3 weights of it; per thread:
        // 2 output channels x 7 columns.
        assertEquals(Map.of("pad.shared", 324L, "kernel.shared", 144L, "conv.local", 56L), allocationBytes(f.body()));
        checkConv(f, 1, 3, 7, 7, 4, 3, 3, 1, 21);
    }

    /** Bytes of every buffer allocated in a program, by name. */
    private static Map<String, Long> allocationBytes(Stmt s) {
        Map<String, Long> out = new java.util.TreeMap<>();
        collectAllocations(s, out);
        return out;
    }

    private static void collectAllocations(Stmt s, Map<String, Long> out) {
        dev.kiln.tir.Stmts.forEachStmt(s, x -> {
            if (x instanceof Allocate a) out.put(a.buffer().name(), PlanMemoryScopes.bytes(a.buffer()));
        });
    }

    @Test
    void conv2dOddSizesBatchTwoAndAReductionSplitThatDoesNotDivide() {
        ComputeDAG dag = GpuSchedules.conv2d(2, 5, 9, 6, 6, 3, 3, 1);
        // n 2 = 2 blocks; f 6 = 3 threads x 2; y 9 = 3 blocks x 3 threads; x 6 = 2 threads x 3; rc 5 in steps of 2.
        GpuSchedules.Tiles t = tiles(
                new int[][] {{1, 1, 1, 1}, {1, 3, 1, 2}, {1, 3, 1, 1}, {1, 2, 3, 1}},
                new int[][] {{2, 1}, {1, 3}, {3, 1}});
        Schedule s = GpuSchedules.multiLevelTiling(
                dag, "conv", CONV_SPATIAL, CONV_REDUCE, List.of("pad", "kernel"), List.of("pad"), t);
        checkConv(lowerGpu("conv", s), 2, 5, 9, 6, 6, 3, 3, 1, 22);
    }

    @Test
    void conv2dWithPaddingAsItsOwnKernel() {
        ComputeDAG dag = GpuSchedules.conv2d(1, 4, 5, 5, 2, 3, 3, 1);
        GpuSchedules.Tiles t = tiles(
                new int[][] {{1, 1, 1, 1}, {2, 1, 1, 1}, {1, 5, 1, 1}, {1, 5, 1, 1}},
                new int[][] {{2, 1}, {1, 3}, {1, 3}});
        ScheduleBuilder b = ScheduleBuilder.on(dag);
        GpuSchedules.tile(b, "conv", CONV_SPATIAL, CONV_REDUCE, List.of("pad", "kernel"), t);
        GpuSchedules.bindElementwise(b.stage("pad"), 32);
        PrimFunc f = lowerGpu("conv", b.build());
        List<GpuKernel> kernels = GpuKernel.find(f.body());
        assertEquals(2, kernels.size(), f.toString());
        // pad: 1 x 4 x 7 x 7 = 196 elements in blocks of 32 threads; conv: 25 threads, 1 block.
        assertEquals(
                Map.of(ThreadAxis.BLOCK_X, 7L, ThreadAxis.THREAD_X, 32L),
                kernels.get(0).extents());
        assertEquals(
                Map.of(ThreadAxis.BLOCK_X, 1L, ThreadAxis.THREAD_X, 25L),
                kernels.get(1).extents());
        assertEquals(25, kernels.get(1).threadsPerBlock());
        checkConv(f, 1, 4, 5, 5, 2, 3, 3, 1, 23);
    }

    // ---- the program itself ----------------------------------------------------------------

    @Test
    void gpuPassesRunAfterTheFirstSimplifyAndTheProgramIsCheckedAgainAtTheEnd() {
        List<String> names = GpuPasses.pipeline(GpuLimits.h200()).stream()
                .map(Lowering.Pass::name)
                .toList();
        List<String> cpu = Lowering.passes().stream().map(Lowering.Pass::name).toList();
        List<String> expected = new java.util.ArrayList<>(cpu);
        expected.addAll(1, List.of("verify-thread-bindings", "plan-memory-scopes", "inject-barriers"));
        expected.add("verify-gpu-program");
        assertEquals(expected, names);
        List<String> dumped = new java.util.ArrayList<>();
        GpuPasses.lower(
                "matmul",
                GpuSchedules.multiLevelTiling(
                        GpuSchedules.matmul(8, 8, 4),
                        "C",
                        List.of("i", "j"),
                        List.of("k"),
                        List.of("A", "B"),
                        tiles(new int[][] {{1, 2, 2, 1}, {1, 2, 2, 1}}, new int[][] {{2, 1}})),
                GpuLimits.h200(),
                new Lowering.Options((pass, f) -> dumped.add(pass)));
        expected.addFirst("schedule-to-loops");
        assertEquals(expected, dumped);
    }

    @Test
    void matmulProgramHasSharedTilesPerBlockAndTwoBarriersPerReductionStep() {
        ComputeDAG dag = GpuSchedules.matmul(16, 24, 12);
        Schedule s = GpuSchedules.multiLevelTiling(
                dag,
                "C",
                List.of("i", "j"),
                List.of("k"),
                List.of("A", "B"),
                tiles(new int[][] {{1, 2, 2, 1}, {2, 2, 1, 2}}, new int[][] {{2, 2}}));
        PrimFunc f = lowerGpu("matmul", s);
        String expected = """
                func matmul(A: float32[16, 12], B: float32[12, 24], C: float32[16, 24]) {
                  for[blockIdx.x] i.0@j.0@ in 0..12 {
                    allocate A.shared: float32[16] shared
                    allocate B.shared: float32[32] shared
                    for[vthread] i.1@j.1@ in 0..2 {
                      for[threadIdx.x] i.2@j.2@ in 0..4 {
                        allocate C.local: float32[4] local
                        for i.3 in 0..2 {
                          for j.4 in 0..2 {
                            C.local[((i.3 * 2) + j.4)] = 0.0f
                          }
                        }
                        for k.0 in 0..3 {
                          for ax0@ax1@.0 in 0..4 {
                            for[threadIdx.x] ax0@ax1@.1 in 0..4 {
                              A.shared[((ax0@ax1@.0 * 4) + ax0@ax1@.1)] = A[((((floordiv(i.0@j.0@, 3) * 48) + \
                (ax0@ax1@.0 * 12)) + (k.0 * 4)) + ax0@ax1@.1)]
                            }
                          }
                          for ax0@ax1@.0 in 0..8 {
                            for[threadIdx.x] ax0@ax1@.1 in 0..4 {
                              B.shared[((ax0@ax1@.0 * 4) + ax0@ax1@.1)] = B[((((k.0 * 96) + \
                (floordiv(((ax0@ax1@.0 * 4) + ax0@ax1@.1), 8) * 24)) + (floormod(i.0@j.0@, 3) * 8)) + \
                floormod(((ax0@ax1@.0 * \
                4) + ax0@ax1@.1), 8))]
                            }
                          }
                          barrier()
                          for k.1 in 0..2 {
                            for i.3 in 0..2 {
                              for k.2 in 0..2 {
                                for j.4 in 0..2 {
                                  C.local[((i.3 * 2) + j.4)] = (C.local[((i.3 * 2) + j.4)] + \
                (A.shared[((((floordiv(i.2@j.2@, 2) * 8) + (i.3 * 4)) + (k.1 * 2)) + k.2)] * \
                B.shared[(((((k.1 * 16) + (k.2 * \
                8)) + (i.1@j.1@ * 4)) + (floormod(i.2@j.2@, 2) * 2)) + j.4)]))
                                }
                              }
                            }
                          }
                          barrier()
                        }
                        for i.3 in 0..2 {
                          for j.3 in 0..2 {
                            C[(((((((floordiv(i.0@j.0@, 3) * 96) + (floordiv(i.2@j.2@, 2) * 48)) + (i.3 * 24)) + \
                (floormod(i.0@j.0@, 3) * 8)) + (i.1@j.1@ * 4)) + (floormod(i.2@j.2@, 2) * 2)) + j.3)] = \
                C.local[((i.3 * 2) + \
                j.3)]
                          }
                        }
                      }
                    }
                  }
                }
                """;
        assertEquals(expected, f.toString());
        GpuKernel k = GpuKernel.find(f.body()).getFirst();
        assertEquals(12, k.blocks());
        assertEquals(4, k.threadsPerBlock());
    }
}
