package dev.kiln.bench.cli;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kiln inspect}: what Kiln makes of a workload, section by section: the DAG, the schedule
 * (the best of {@code --log}; without a log the default lowering on a CPU, the simple thread
 * binding on CUDA), the schedule as Java, the lowered loop IR, and the generated code (LLVM IR and
 * assembly on cpu, the JVM backend's source on jvm, CUDA C on cuda, which needs no GPU).
 */
@Command(
        name = "inspect",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Print a workload's DAG, best schedule, lowered IR and generated code (LLVM IR + assembly, CUDA C).",
            "Example: kiln inspect --op GMM --config 1,64,64,64 --log gmm.jsonl --show schedule,ir"
        })
final class InspectCommand implements Callable<Integer> {

    static final List<String> SECTIONS = List.of("dag", "schedule", "java", "ir", "source");

    @Mixin
    WorkloadOptions workload = new WorkloadOptions();

    @Mixin
    TargetOptions target = new TargetOptions();

    @Option(names = "--log", description = "Take the best schedule of this tuning log (default: no schedule).")
    Path log;

    @Option(
            names = "--show",
            split = ",",
            paramLabel = "SECTION",
            description = "Sections to print: dag, schedule, java, ir, source (default: all).")
    List<String> show = SECTIONS;

    @Option(names = "--json", description = "Print the sections as one JSON object.")
    boolean json;

    @Option(
            names = "--layout-free",
            description = "The workload's constant weights layout-free, as ./kiln suite tunes its convs by default "
                    + "(their records are keyed 'layout_free=[1]'): the schedule is looked up under that key and "
                    + "lowered reading the weights packed (default: off, the weights read as given).")
    boolean layoutFree;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        for (String s : show) {
            if (!SECTIONS.contains(s.toLowerCase(Locale.ROOT))) {
                throw new KilnException("--show: unknown section '" + s + "' (" + String.join(", ", SECTIONS) + ")");
            }
        }
        SuiteWorkload w = workload.workload();
        ComputeDAG dag = SuiteDags.of(w);
        Target t = target.target();
        SearchTask task = AutoSchedule.task(dag, t, WorkloadOptions.layoutFree(w, layoutFree));
        if (layoutFree && log == null) throw new KilnException("--layout-free needs --log (a layout-free schedule)");
        Schedule s = log != null
                ? AutoSchedule.bestSchedule(task, log)
                : t instanceof CudaTarget ? SimpleGpuSchedule.of(dag, 256) : null;
        if (s != null && !task.layoutFree().isEmpty())
            s = task.rewriteLayouts(s).schedule(); // as it is compiled
        String how = log != null
                ? "best of " + log
                : s != null ? "SimpleGpuSchedule, 256 threads per block (no log)" : "none: the default lowering";
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("workload", w.label());
        out.put("target", t.toString());
        PrimFunc f = null;
        for (String section : SECTIONS) {
            if (show.stream().noneMatch(section::equalsIgnoreCase)) continue;
            String text =
                    switch (section) {
                        case "dag" -> dag.toString();
                        case "schedule" -> s == null ? how : how + "\n" + s;
                        case "java" -> s == null ? "// " + how : s.toJavaSource();
                        case "ir" -> (f = f != null ? f : lower(dag, task, s)).toString();
                        case "source" -> source(f = f != null ? f : lower(dag, task, s), t);
                        default -> throw new IllegalStateException(section);
                    };
            out.put(section, text);
        }
        if (json) {
            Json.print(spec.commandLine().getOut(), out);
        } else {
            var o = spec.commandLine().getOut();
            o.println("# " + w.label() + " on " + t);
            for (var e : out.entrySet()) {
                if (e.getKey().equals("workload") || e.getKey().equals("target")) continue;
                o.println("\n## " + e.getKey() + "\n" + e.getValue());
            }
            o.flush();
        }
        return 0;
    }

    private static PrimFunc lower(ComputeDAG dag, SearchTask task, Schedule s) {
        String name = "kiln_" + dag.outputs().getFirst().name().replaceAll("[^A-Za-z0-9_]", "_");
        if (s == null) return LowerDefault.lower(name, dag);
        PrimFunc f = ScheduleLowerer.forTarget(task.target()).lower(task, s);
        return new PrimFunc(name, f.params(), f.body());
    }

    private static String source(PrimFunc f, Target t) {
        if (t instanceof CudaTarget) return CudaCodegen.generate(f).source();
        try (CompiledKernel k = Backend.forTarget(t).compile(f, t)) {
            return k.source();
        }
    }
}
