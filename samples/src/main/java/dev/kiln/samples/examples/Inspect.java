package dev.kiln.samples.examples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.Kiln;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;

/** Prints every form a computation takes: the DAG, the loop program, LLVM IR and assembly, CUDA C. */
public final class Inspect {
    private Inspect() {}

    /** {@code ./kiln sample inspect [n]}: an n x n matmul (default 64). */
    public static void main(String[] args) {
        run(Samples.intArg(args, 0, 64));
    }

    public static void run(int n) {
        // readme:begin
        Tensor A = placeholder("A", FLOAT32, n, n);
        Tensor B = placeholder("B", FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor C = compute("C", shape(n, n), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));
        ComputeDAG dag = ComputeDAG.of(C);
        System.out.println(dag); // the computation, one line per stage

        PrimFunc f = Lowering.lower("matmul", Schedule.empty(dag)); // Lowering.Options.dumpToStderr(): every pass
        System.out.println(f); // the loop program (the IR the backends compile)
        try (CompiledKernel cpu = Kiln.compile(C, Target.CPU)) {
            System.out.println(cpu.source()); // the optimised LLVM IR, then the assembly
        }
        try (CompiledKernel gpu = Kiln.compile(C, Target.CUDA)) { // needs NVRTC or nvcc, not a GPU
            System.out.println(gpu.source()); // the CUDA C
        }
        // readme:end
    }
}
