package dev.kiln.bench.cli;

import dev.kiln.ir.KilnException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * Kiln's command line, behind {@code ./kiln}: {@code tune}, {@code apply}, {@code inspect},
 * {@code bench} and {@code plot}, each with {@code --help}; {@code --json} on the first four and
 * on the plots gives one JSON document on standard output for scripts (progress and messages go
 * to standard error). A bad argument ends the command with its {@link KilnException} message and
 * exit code 2, not a stack trace.
 */
@Command(
        name = "kiln",
        mixinStandardHelpOptions = true,
        version = "Kiln 0.1.0-SNAPSHOT",
        description = "Kiln, a tensor compiler for the JVM: tune, apply, inspect, benchmark and plot.",
        subcommands = {
            TuneCommand.class,
            ApplyCommand.class,
            InspectCommand.class,
            BenchCommand.class,
            PlotCommand.class,
            CommandLine.HelpCommand.class
        })
public final class KilnCli implements Runnable {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, ready to execute. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new KilnCli());
        BenchCommand.addBenchmarks(cl.getSubcommands().get("bench"));
        // later occurrences win, so scripts can put defaults first and the user's options after
        cl.setOverwrittenOptionsAllowed(true);
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            if (!(e instanceof KilnException)) throw e;
            line.getErr().println(line.getCommandSpec().qualifiedName() + ": " + e.getMessage());
            return 2;
        });
        return cl;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
    }
}
