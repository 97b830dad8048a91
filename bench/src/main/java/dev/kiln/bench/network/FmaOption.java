package dev.kiln.bench.network;

import dev.kiln.target.CpuTarget;
import picocli.CommandLine.Option;

/**
 * {@code --fma/--no-fma} of the commands that tune and time Kiln against libraries ({@code ./kiln network-bench}
 * and so {@code ./kiln run}, {@code ./kiln onnx}, {@code ./kiln suite}, {@code ./kiln bench lowp}): a picocli
 * mixin. On by default: float
 * {@code a * b + c} is contracted into one FMA ({@link CpuTarget#withFastMath}, {@code -fast-math=1} in the target
 * string), as oneDNN, ONNX Runtime, PyTorch and OpenBLAS compute and as TVM's LLVM backend compiles. Results then
 * differ from the interpreter's in the last bits, within the commands' tolerances. The target string is part of a
 * tuning log's records, so a log tuned without contraction is found again only with {@code --no-fma}.
 */
public final class FmaOption {
    @Option(
            names = "--fma",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Compile Kiln's kernels with float a * b + c contracted into FMAs, as ONNX Runtime, oneDNN, "
                    + "PyTorch and OpenBLAS run (the target's -fast-math=1; results differ from the interpreter's in "
                    + "the last bits, within the tolerance). --no-fma keeps two roundings: the target of the logs "
                    + "tuned before 2026-12-02 (default: on).")
    boolean fma = true;

    /** Whether multiply-adds are contracted. */
    public boolean enabled() {
        return fma;
    }

    /**
     * {@code target} with contraction set as chosen. The pure-JVM target (triple {@code jvm}) is returned as it is:
     * its backend computes each operation as written, so marking it would only change its log key.
     */
    public CpuTarget apply(CpuTarget target) {
        return target.triple().equals("jvm") ? target : target.withFastMath(fma);
    }

    /** The argument that passes this choice on to a child JVM's command line. */
    public String arg() {
        return fma ? "--fma" : "--no-fma";
    }
}
