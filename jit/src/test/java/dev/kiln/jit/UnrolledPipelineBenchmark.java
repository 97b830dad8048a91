package dev.kiln.jit;

import static dev.kiln.jit.Funcs.*;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Experiment (issue 15): compile time and kernel time of a matmul whose inner 4x8x16 block sits
 * under {@code auto_unroll_max_step = 512} (512 scalar statements per body, as in unroll-512
 * tuned programs), with O3, O3 without loop unrolling, and O2. Not part of the test suite.
 */
class UnrolledPipelineBenchmark {
    private static PrimFunc mm(int n) {
        Buffer a = buf("A", DType.FLOAT32, n, n), b = buf("B", DType.FLOAT32, n, n), c = buf("C", DType.FLOAT32, n, n);
        Var io = new Var("io"), jo = new Var("jo"), ko = new Var("ko"), ki = new Var("ki"), ii = new Var("ii");
        Var ji = new Var("ji");
        Expr i = io.mul(8).add(ii), j = jo.mul(16).add(ji), k = ko.mul(4).add(ki);
        Stmt upd = store(c, load(c, i, j).add(load(a, i, k).mul(load(b, k, j))), i, j);
        Stmt block = loop(ki, 4, ForKind.SERIAL, loop(ii, 8, ForKind.SERIAL, loop(ji, 16, ForKind.SERIAL, upd)));
        Stmt body = loop(
                io,
                n / 8,
                ForKind.SERIAL,
                loop(
                        jo,
                        n / 16,
                        ForKind.SERIAL,
                        loop(ko, n / 4, ForKind.SERIAL, new Pragma(Pragma.AUTO_UNROLL_MAX_STEP, 512, block))));
        return new PrimFunc("mmu" + n, List.of(a, b, c), body);
    }

    @Test
    void run() throws Exception {
        StringBuilder sb = new StringBuilder("unroll-512 matmul 256, loadavg ")
                .append(Files.readString(Path.of("/proc/loadavg")).trim())
                .append('\n');
        String[] pipes = {"default<O3>", "default<O3>", "default<O2>"};
        boolean[] unroll = {true, false, true};
        String[] names = {"O3", "O3 no unroll", "O2"};
        int n = 256;
        PrimFunc f = mm(n);
        List<NDArray> args = JitCheck.randomArgs(f, 5);
        for (int round = 0; round < 5; round++) {
            for (int p = 0; p < 3; p++) {
                OrcJit.pipeline = pipes[p];
                OrcJit.loopUnrolling = unroll[p];
                LlvmBackend.clearCache();
                long t0 = System.nanoTime();
                try (LlvmKernel kk = JitCheck.BACKEND.compile(f, JitCheck.TARGET)) {
                    double compileMs = (System.nanoTime() - t0) / 1e6;
                    for (int w = 0; w < 3; w++) kk.call(args.toArray(NDArray[]::new));
                    double[] t = new double[15];
                    for (int r = 0; r < t.length; r++) {
                        long c0 = System.nanoTime();
                        kk.call(args.toArray(NDArray[]::new));
                        t[r] = (System.nanoTime() - c0) / 1e6;
                    }
                    java.util.Arrays.sort(t);
                    sb.append(String.format(
                            Locale.ROOT,
                            "round %d %-14s compile %7.1f ms (%s)  kernel min %.3f" + " median %.3f ms%n",
                            round,
                            names[p],
                            compileMs,
                            kk.compileTimes(),
                            t[0],
                            t[7]));
                }
            }
        }
        OrcJit.pipeline = "default<O3>";
        OrcJit.loopUnrolling = true;
        sb.append("loadavg after ")
                .append(Files.readString(Path.of("/proc/loadavg")).trim())
                .append('\n');
        System.out.println(sb);
        Files.writeString(Path.of("target/unrolled-pipeline-benchmark.txt"), sb.toString());
    }
}
