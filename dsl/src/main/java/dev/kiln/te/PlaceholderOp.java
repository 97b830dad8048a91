package dev.kiln.te;

import dev.kiln.ir.DType;
import java.util.List;
import java.util.Objects;

/** An input tensor of a computation: a name, a shape and a dtype, with no body. */
public final class PlaceholderOp implements Operation {
    private final String name;
    private final Tensor output;

    PlaceholderOp(String name, Shape shape, DType dtype) {
        this.name = Objects.requireNonNull(name, "name");
        this.output = new Tensor(this, 0, name, shape, dtype);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<Tensor> outputs() {
        return List.of(output);
    }

    @Override
    public List<Tensor> inputTensors() {
        return List.of();
    }

    @Override
    public String toString() {
        return "placeholder " + name;
    }
}
