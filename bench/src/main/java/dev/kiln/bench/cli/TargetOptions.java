package dev.kiln.bench.cli;

import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.util.Locale;
import picocli.CommandLine.Option;

/** The target a command compiles for: {@code --target cpu|jvm|cuda} and {@code --threads}. */
final class TargetOptions {

    @Option(
            names = "--target",
            paramLabel = "KIND",
            description = "cpu (LLVM, this host), jvm (the pure-JVM backend) or cuda (an H200-class GPU; tuning and "
                    + "running need one, inspect does not), or a full target string such as a cluster worker "
                    + "prints ('cuda -arch=sm_80 ...') (default: ${DEFAULT-VALUE}).")
    String target = "cpu";

    @Option(
            names = "--threads",
            paramLabel = "N",
            description = "CPU threads the kernels use (default: every core of this host).")
    Integer threads;

    @Option(
            names = "--fma",
            description = "cpu target: contract float a * b + c into FMAs (-fast-math=1 in the target string), as "
                    + "./kiln onnx, network-bench, run, suite and bench lowp compile by default; needed to find "
                    + "their logs' records (default: off here, so results equal the interpreter's bit for bit).")
    boolean fma;

    Target target() {
        if (threads != null && threads < 1) throw new KilnException("--threads must be at least 1, got " + threads);
        if (target.strip().contains(" ")) { // a full target string
            if (threads != null) throw new KilnException("--threads: give the cores in the full --target string");
            if (fma) throw new KilnException("--fma: give -fast-math=1 in the full --target string");
            return Target.parse(target);
        }
        String kind = target.toLowerCase(Locale.ROOT);
        if (fma && !kind.equals("cpu")) {
            throw new KilnException("--fma applies to the cpu target (LLVM), not " + kind);
        }
        return switch (kind) {
            case "cpu" -> (threads == null ? Target.cpu() : Target.cpu().withCores(threads)).withFastMath(fma);
            case "jvm" -> threads == null ? Target.jvm() : Target.jvm().withCores(threads);
            case "cuda" -> {
                if (threads != null) throw new KilnException("--threads applies to cpu and jvm targets, not cuda");
                yield Target.cuda();
            }
            default -> throw new KilnException("--target: unknown target '" + target + "' (cpu, jvm, cuda)");
        };
    }
}
