package dev.kiln.samples;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Kiln's main job ({@code ./kiln run}). Until the JIT exists it runs real workloads (a 512^3
 * matmul and a ResNet conv2d layer) through the default lowering and the reference interpreter,
 * and checks every output element against plain-Java loops on seeded random inputs.
 */
@Command(name = "kiln run", mixinStandardHelpOptions = true,
        description = "Runs real workloads through Kiln and checks them against plain Java.")
public final class MainJob implements Callable<Integer> {

    /** The workloads the job can run. */
    enum Which { matmul, conv2d }

    @Option(names = "--workload", split = ",", description = "Which workloads to run: ${COMPLETION-CANDIDATES} (default: all).")
    List<Which> workloads = List.of(Which.values());

    @Option(names = "--matmul-size", description = "M = N = K of the matmul (default: ${DEFAULT-VALUE}).")
    int matmulSize = 512;

    @Option(names = "--seed", description = "Seed of the random inputs (default: ${DEFAULT-VALUE}).")
    long seed = 2026;

    @Option(names = "--rtol", description = "Relative tolerance of the check (default: ${DEFAULT-VALUE}).")
    double rtol = 1e-4;

    @Option(names = "--atol", description = "Absolute tolerance of the check (default: ${DEFAULT-VALUE}).")
    double atol = 1e-4;

    @Option(names = "--show-ir", description = "Print the lowered loop program of each workload.")
    boolean showIr;

    public static void main(String[] args) {
        System.exit(new CommandLine(new MainJob()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }

    @Override
    public Integer call() {
        List<Workload> list = new ArrayList<>();
        for (Which w : workloads) {
            list.add(switch (w) {
                case matmul -> Workloads.matmul(matmulSize, matmulSize, matmulSize);
                // ResNet-50 stage 2 3x3 layer (also ResNet-18's conv2_x).
                case conv2d -> Workloads.conv2dNhwc(1, 56, 56, 64, 64, 3, 1, 1);
            });
        }
        System.out.println("Kiln main job: the reference interpreter against plain Java on seeded random inputs (seed "
                + seed + ").");
        System.out.println("No JIT yet (issue 4): the interpreter is the definition of correct, not a fast path.");
        System.out.println();
        System.out.printf(Locale.ROOT, "%-44s %8s %12s %12s %10s %s%n",
                "workload", "GFLOP", "interpreter", "plain Java", "max |err|", "check");
        boolean allOk = true;
        for (Workload w : list) allOk &= run(w);
        System.out.println();
        System.out.println(allOk ? "All outputs match the plain-Java reference." : "SOME OUTPUTS DIFFER (see above).");
        return allOk ? 0 : 1;
    }

    private boolean run(Workload w) {
        List<Tensor> args = new ArrayList<>(w.inputs());
        args.add(w.output());
        PrimFunc f = LowerDefault.lower(w.output().name(), args);
        if (showIr) System.out.println(f);
        long flops = new ComputeDAG(List.of(w.output())).flopCount();
        List<NDArray> inputs = new ArrayList<>();
        for (int i = 0; i < w.inputs().size(); i++) {
            Tensor t = w.inputs().get(i);
            inputs.add(NDArray.random(t.dtype(), seed + i, t.shape().toArray()));
        }
        try (NDArray out = NDArray.allocate(w.output().dtype(), w.output().shape().toArray())) {
            List<NDArray> all = new ArrayList<>(inputs);
            all.add(out);
            dev.kiln.interp.Program program = Interpreter.compile(f);
            long t0 = System.nanoTime();
            program.run(all.toArray(NDArray[]::new));
            long t1 = System.nanoTime();
            NDArray expected = w.expected(inputs);
            long t2 = System.nanoTime();
            Comparison cmp = out.compareTo(expected, rtol, atol);
            System.out.printf(Locale.ROOT, "%-44s %8.3f %10.2f s %10.3f s %10.2e %s%n", w.name(), flops / 1e9,
                    (t1 - t0) / 1e9, (t2 - t1) / 1e9, cmp.maxAbsError(), cmp.ok() ? "OK" : "MISMATCH");
            if (!cmp.ok()) System.out.println("  " + cmp.report());
            expected.close();
            return cmp.ok();
        } finally {
            inputs.forEach(NDArray::close);
        }
    }
}
