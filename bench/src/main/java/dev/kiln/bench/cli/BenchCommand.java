package dev.kiln.bench.cli;

import dev.kiln.bench.TuneReport;
import dev.kiln.bench.lowp.LowpCommand;
import dev.kiln.bench.measure.MeasureBench;
import dev.kiln.bench.model.CostModelBench;
import dev.kiln.bench.model.PretrainBench;
import dev.kiln.bench.model.SearchEfficiencyBench;
import dev.kiln.bench.network.NetworkBench;
import dev.kiln.bench.onnx.OnnxBench;
import dev.kiln.bench.space.SpaceBench;
import dev.kiln.bench.suite.OperatorSuite;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code kiln bench NAME [options]}: the existing benchmarks under one command. The picocli ones
 * (suite, network, onnx, model, search, pretrain, measure, lowp) keep their own options and
 * {@code --help}; jmh, tune-report and space pass their arguments through unchanged.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = {
            "Run one of Kiln's benchmarks (each has its own --help). Do not compare numbers taken on a busy machine.",
            "Example: kiln bench suite --ops GMM --threads 1 --trials 64"
        })
final class BenchCommand implements Callable<Integer> {

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }

    /** Adds the benchmarks to {@code bench}. */
    static void addBenchmarks(CommandLine bench) {
        bench.addSubcommand("suite", new OperatorSuite());
        bench.addSubcommand("network", new NetworkBench());
        bench.addSubcommand("onnx", new OnnxBench());
        bench.addSubcommand("model", new CostModelBench());
        bench.addSubcommand("search", new SearchEfficiencyBench());
        bench.addSubcommand("pretrain", new PretrainBench());
        bench.addSubcommand("measure", new MeasureBench());
        bench.addSubcommand("lowp", new LowpCommand());
        pass(bench, "jmh", "The JMH benchmarks (JMH's own options; -h lists them).", org.openjdk.jmh.Main::main);
        pass(
                bench,
                "tune-report",
                "GEMM 1024 and C2D 56x56x64 tuned, against the hand schedule and OpenBLAS. Arguments: [trials] [log].",
                TuneReport::main);
        pass(
                bench,
                "space",
                "Ansor's CPU search space against Kiln's on GEMM n. Arguments: [n] [trials] [seed] [dir].",
                SpaceBench::main);
    }

    private static void pass(CommandLine bench, String name, String description, PassThrough.Main main) {
        CommandLine sub = new CommandLine(new PassThrough(main));
        sub.getCommandSpec().usageMessage().description(description);
        bench.addSubcommand(name, sub);
    }

    /** A benchmark with a plain main: every argument goes to it. */
    @Command(mixinStandardHelpOptions = false)
    static final class PassThrough implements Callable<Integer> {
        /** A benchmark's main method. */
        interface Main {
            void run(String[] args) throws Exception;
        }

        @Unmatched
        List<String> args = new ArrayList<>();

        private final Main main;

        PassThrough(Main main) {
            this.main = main;
        }

        @Override
        public Integer call() throws Exception {
            main.run(args.toArray(String[]::new));
            return 0;
        }
    }
}
