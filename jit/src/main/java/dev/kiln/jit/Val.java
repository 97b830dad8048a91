package dev.kiln.jit;

import dev.kiln.ir.DType;

/**
 * A value during code generation. In scalar code every value is {@link Form#UNIFORM}. Inside a
 * vectorized loop a value is either the same in every lane (UNIFORM: one scalar), an integer
 * that grows by {@code step} from lane to lane (LINEAR: the scalar {@code ref} is lane 0), or
 * anything else (VARYING: {@code ref} is an LLVM vector). Keeping LINEAR values symbolic is what
 * turns {@code A[i, j]} with {@code j} vectorized into one contiguous vector load.
 */
record Val(Form form, String ref, long step, DType dtype) {
    enum Form {
        UNIFORM,
        LINEAR,
        VARYING
    }

    static Val uniform(String ref, DType t) {
        return new Val(Form.UNIFORM, ref, 0, t);
    }

    static Val varying(String ref, DType t) {
        return new Val(Form.VARYING, ref, 0, t);
    }

    static Val linear(String base, long step, DType t) {
        return step == 0 ? uniform(base, t) : new Val(Form.LINEAR, base, step, t);
    }

    boolean isUniform() {
        return form == Form.UNIFORM;
    }

    boolean isLiteral() {
        return form == Form.UNIFORM && IrTypes.isLiteral(ref);
    }
}
