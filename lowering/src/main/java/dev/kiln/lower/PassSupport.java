package dev.kiln.lower;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import java.util.OptionalLong;

/** What the passes share beyond the traversal library ({@link dev.kiln.tir.Stmts}): constants. */
final class PassSupport {
    private PassSupport() {}

    /** The constant value of an integer expression, if it is one. */
    static OptionalLong constant(Expr e) {
        return e instanceof IntImm c && c.dtype().isInt() ? OptionalLong.of(c.value()) : OptionalLong.empty();
    }
}
