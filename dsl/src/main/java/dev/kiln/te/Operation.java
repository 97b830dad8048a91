package dev.kiln.te;

import java.util.List;

/**
 * A node of the computation graph: a {@link PlaceholderOp} (an input) or a {@link ComputeOp}.
 * Operations compare by identity and own the tensors they output.
 */
public sealed interface Operation permits PlaceholderOp, ComputeOp {
    String name();

    List<Tensor> outputs();

    /** The tensors this operation reads, each once, in order of first use. */
    List<Tensor> inputTensors();

    default Tensor output(int i) {
        return outputs().get(i);
    }
}
