package dev.kiln.tir;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * A function of the loop IR: its buffer parameters (the inputs, then the outputs, in the order a
 * caller passes NDArrays) and its body.
 */
public record PrimFunc(String name, List<Buffer> params, Stmt body) {
    public PrimFunc {
        Objects.requireNonNull(name, "name");
        params = List.copyOf(params);
        Objects.requireNonNull(body, "body");
        if (new HashSet<>(params).size() != params.size()) {
            throw new KilnException("function '" + name + "' lists a buffer twice among its parameters");
        }
    }

    public PrimFunc withBody(Stmt newBody) {
        return newBody == body ? this : new PrimFunc(name, params, newBody);
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
