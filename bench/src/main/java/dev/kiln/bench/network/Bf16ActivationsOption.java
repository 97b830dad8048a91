package dev.kiln.bench.network;

import dev.kiln.graph.pass.ToBfloat16;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code --bf16-activations} of the commands with {@code --bf16} ({@code ./kiln network-bench}, {@code ./kiln onnx}):
 * a picocli mixin choosing {@link ToBfloat16.Activations}, float32 values between layers (the default) or bfloat16
 * ones written by the kernels that compute them.
 */
public final class Bf16ActivationsOption {
    @Option(
            names = "--bf16-activations",
            description = "With --bf16: the values the bfloat16 layers read kept in FLOAT32 (cast where read) or "
                    + "BFLOAT16 (written so by the kernels computing them, widened where float32 reads them); "
                    + "default: ${DEFAULT-VALUE}.")
    ToBfloat16.Activations activations = ToBfloat16.Activations.FLOAT32;

    /** The choice. */
    public ToBfloat16.Activations activations() {
        return activations;
    }

    /** Whether the values are kept in bfloat16. */
    public boolean narrow() {
        return activations == ToBfloat16.Activations.BFLOAT16;
    }

    /** The arguments that pass this choice on to a child JVM's command line. */
    public List<String> args() {
        return List.of("--bf16-activations", activations.name());
    }
}
