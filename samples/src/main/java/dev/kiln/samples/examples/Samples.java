package dev.kiln.samples.examples;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * The README's worked examples as programs: {@code ./kiln sample} lists them, {@code ./kiln sample
 * NAME [args]} runs one. Each example's code between {@code // readme:begin} and
 * {@code // readme:end} is the README's block marked {@code <!-- sample: NAME -->}, word for word
 * (ReadmeSamplesTest checks it, and runs every example on a small size).
 */
public final class Samples {
    private Samples() {}

    /**
     * One example.
     *
     * @param name        what {@code ./kiln sample} takes
     * @param type        the class holding its code
     * @param usage       its arguments and defaults
     * @param description one line
     * @param main        its main method
     */
    public record Sample(String name, Class<?> type, String usage, String description, Consumer<String[]> main) {}

    /** Every example, in the README's order. */
    public static final List<Sample> ALL = List.of(
            new Sample(
                    "compile", Compile.class, "[n]", "describe a matmul, compile it untuned, call it", Compile::main),
            new Sample(
                    "custom",
                    CustomComputation.class,
                    "[rows]",
                    "a computation of your own (dense + bias + ReLU) with named axes",
                    CustomComputation::main),
            new Sample("argmax", Argmax.class, "[rows] [columns]", "a custom reducer: argmax per row", Argmax::main),
            new Sample(
                    "schedule",
                    ScheduleByHand.class,
                    "[n]",
                    "a matmul scheduled by hand (tiles, local cache, parallel, vector)",
                    ScheduleByHand::main),
            new Sample("tune", Tune.class, "[n] [trials] [log]", "auto-schedule a matmul, call the best", Tune::main),
            new Sample("apply", ApplyLog.class, "[n] [log]", "build the best program of a tuning log", ApplyLog::main),
            new Sample(
                    "inspect",
                    Inspect.class,
                    "[n]",
                    "print the DAG, the loop IR, LLVM IR and assembly, CUDA C",
                    Inspect::main),
            new Sample("jvm", JvmBackend.class, "[n]", "the pure-JVM backend next to LLVM", JvmBackend::main),
            new Sample(
                    "network",
                    NetworkExample.class,
                    "[batch] [trials] [log]",
                    "a network built op by op, tuned as a whole",
                    NetworkExample::main),
            new Sample(
                    "onnx",
                    OnnxModel.class,
                    "[model.onnx] [trials]",
                    "import, tune and run an ONNX model",
                    OnnxModel::main));

    /**
     * {@code ./kiln sample}: lists the examples; {@code ./kiln sample NAME [args]} runs one. A
     * {@link KilnException} (an unknown name, a bad argument, a missing tuning log) is printed as one
     * message, and the exit status is 1.
     */
    public static void main(String[] args) {
        try {
            run(args);
        } catch (KilnException e) {
            System.err.println("kiln sample: " + e.getMessage());
            System.exit(1);
        }
    }

    /** What {@link #main} does, throwing {@link KilnException} instead of exiting. */
    public static void run(String[] args) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
            System.out.println("usage: ./kiln sample NAME [args]   (the README's examples; source: "
                    + "samples/src/main/java/dev/kiln/samples/examples/)");
            for (Sample s : ALL) {
                System.out.printf("  %-9s %-24s %s%n", s.name(), s.usage(), s.description());
            }
            return;
        }
        Sample s = find(args[0]);
        s.main().accept(Arrays.copyOfRange(args, 1, args.length));
    }

    /** The example called {@code name}; throws naming the known ones. */
    public static Sample find(String name) {
        return ALL.stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new KilnException("no sample '" + name + "'; samples: "
                        + ALL.stream().map(Sample::name).toList()));
    }

    /** The {@code i}-th argument as a positive int, or {@code fallback} when absent. */
    static int intArg(String[] args, int i, int fallback) {
        if (args.length <= i) return fallback;
        try {
            int v = Integer.parseInt(args[i]);
            if (v > 0) return v;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new KilnException("argument " + (i + 1) + " '" + args[i] + "' is not a positive whole number");
    }
}
