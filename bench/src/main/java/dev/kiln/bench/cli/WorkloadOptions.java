package dev.kiln.bench.cli;

import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.bench.suite.SuiteWorkloads;
import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * Which operator workload a command works on: an operator of the workload library
 * (../shared/workloads/ansor-ops.tsv, shipped with the suite) with {@code --op}, one of its
 * configurations with {@code --config} (any configuration of that operator is accepted, listed or
 * not; without it, the first listed one), from another list with {@code --workloads}.
 */
final class WorkloadOptions {

    @Option(
            names = "--op",
            paramLabel = "OP",
            description = "Operator of the workload library: C1D, C2D, C3D, GMM, GRP, DIL, DEP, T2D, CAP, NRM, SFM, "
                    + "ConvLayer, TBS.")
    String op;

    @Option(
            names = "--config",
            paramLabel = "N,..",
            description = "Its parameters as in the list, e.g. 1,128,128,128 for GMM (default: the first listed).")
    String config;

    @Option(
            names = "--workloads",
            paramLabel = "FILE",
            description = "Workload list, lines 'op<TAB>compute<TAB>config' (default: the built-in ansor-ops.tsv).")
    Path workloads;

    /** Whether an operator was chosen. */
    boolean given() {
        return op != null;
    }

    /** The list {@code --workloads} names, or the built-in one. */
    List<SuiteWorkload> list() {
        return workloads == null ? SuiteWorkloads.builtIn() : SuiteWorkloads.read(workloads);
    }

    /** The chosen workload; throws naming the option at fault. */
    SuiteWorkload workload() {
        if (op == null) throw new KilnException("--op: no operator given (e.g. --op GMM --config 1,128,128,128)");
        if (config == null) return SuiteWorkloads.select(list(), List.of(op), 1).getFirst();
        String text = op + "\t-\t" + config;
        return SuiteWorkloads.parse(text, "--op " + op + " --config " + config).getFirst();
    }

    /**
     * The layout-free arguments of {@code w} for a command's {@code --layout-free} (its constant weights, as the
     * suite tunes them); none when {@code on} is false. Throws naming the option when {@code w} has none.
     */
    static List<String> layoutFree(SuiteWorkload w, boolean on) {
        if (!on) return List.of();
        List<String> constants = SuiteDags.layoutFree(w);
        if (constants.isEmpty())
            throw new KilnException("--layout-free: " + w.label() + " has no constant weight to pack");
        return constants;
    }

    /**
     * Every workload of the list (batch 1 and as listed) by workload key, with its label: how a
     * tuning log's workload keys are named and given their DAG.
     */
    Map<String, Named> byKey() {
        Map<String, Named> out = new LinkedHashMap<>();
        List<SuiteWorkload> all = new ArrayList<>(list());
        if (op != null) all.addFirst(workload());
        for (SuiteWorkload w : all) {
            ComputeDAG dag = SuiteDags.of(w);
            out.putIfAbsent(dag.workloadKey(), new Named(w.label(), dag));
        }
        return out;
    }

    /** A workload's label and DAG. */
    record Named(String label, ComputeDAG dag) {}
}
