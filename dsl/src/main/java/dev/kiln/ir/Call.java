package dev.kiln.ir;

import java.util.List;

/** A call of a math {@link Intrinsic}. */
public record Call(Intrinsic fn, List<Expr> args) implements Expr {
    public Call {
        if (fn == null) throw new KilnException("call: the intrinsic is null");
        if (args == null) throw new KilnException(fn.displayName() + ": the argument list is null");
        for (int k = 0; k < args.size(); k++) {
            if (args.get(k) == null) throw new KilnException(fn.displayName() + ": argument " + k + " is null");
        }
        args = List.copyOf(args);
        if (args.size() != fn.arity()) {
            throw new KilnException(fn.displayName() + " takes " + fn.arity() + " argument(s), got " + args.size());
        }
        DType t = args.get(0).dtype();
        for (Expr a : args) {
            if (a.dtype() != t) {
                throw new KilnException("dtype mismatch in " + fn.displayName() + ": " + ExprPrinter.print(args.get(0))
                        + " is " + t + " but " + ExprPrinter.print(a) + " is " + a.dtype() + "; add a cast()");
            }
            if (fn == Intrinsic.ABS) {
                if (!a.dtype().isNumeric()) throw new KilnException("abs needs a numeric operand, got bool");
            } else {
                Checks.requireFloat(fn.displayName(), a);
            }
        }
    }

    @Override
    public DType dtype() {
        return args.get(0).dtype();
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
