package dev.kiln.ir;

/** {@code cond ? t : f}. Both branches have one type; only the chosen branch is evaluated. */
public record Select(Expr cond, Expr t, Expr f) implements Expr {
    public Select {
        Checks.requireBool("select condition", cond);
        if (t == null || f == null) {
            throw new KilnException("select(" + ExprPrinter.print(cond) + ", ...): the "
                    + (t == null ? "true" : "false") + " branch is null");
        }
        if (t.dtype() != f.dtype()) {
            throw new KilnException("select branches differ in dtype: " + ExprPrinter.print(t) + " is " + t.dtype()
                    + " but " + ExprPrinter.print(f) + " is " + f.dtype() + "; add a cast()");
        }
    }

    @Override
    public DType dtype() {
        return t.dtype();
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
