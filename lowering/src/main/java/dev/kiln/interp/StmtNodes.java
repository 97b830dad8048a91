package dev.kiln.interp;

/** Statements: loops, sequences, conditionals, bindings, allocation and evaluation. */
final class StmtNodes {
    private StmtNodes() {}

    /**
     * A loop of any kind, run serially in order: {@code var = min + k} for {@code k} in
     * {@code [0, extent)}, wrapped to the variable's type.
     */
    static final class For extends ExecNode {
        final int slot;
        final LongNode min;
        final LongNode extent;
        final ExecNode body;
        final int sh;
        final boolean uns;

        For(int slot, LongNode min, LongNode extent, ExecNode body, int sh, boolean uns) {
            this.slot = slot;
            this.min = min;
            this.extent = extent;
            this.body = body;
            this.sh = sh;
            this.uns = uns;
        }

        @Override
        void run(Frame f) {
            long lo = min.eval(f);
            long n = extent.eval(f);
            long[] ints = f.ints;
            for (long k = 0; k < n; k++) {
                ints[slot] = IntNodes.wrap(lo + k, sh, uns);
                body.run(f);
            }
        }
    }

    static final class Seq extends ExecNode {
        final ExecNode[] stmts;

        Seq(ExecNode[] stmts) {
            this.stmts = stmts;
        }

        @Override
        void run(Frame f) {
            for (ExecNode s : stmts) s.run(f);
        }
    }

    static final class Nop extends ExecNode {
        @Override
        void run(Frame f) {}
    }

    static final class If extends ExecNode {
        final LongNode cond;
        final ExecNode then;
        final ExecNode otherwise; // null when there is no else branch

        If(LongNode cond, ExecNode then, ExecNode otherwise) {
            this.cond = cond;
            this.then = then;
            this.otherwise = otherwise;
        }

        @Override
        void run(Frame f) {
            if (cond.eval(f) != 0) then.run(f);
            else if (otherwise != null) otherwise.run(f);
        }
    }

    static final class LetLong extends ExecNode {
        final int slot;
        final LongNode value;
        final ExecNode body;

        LetLong(int slot, LongNode value, ExecNode body) {
            this.slot = slot;
            this.value = value;
            this.body = body;
        }

        @Override
        void run(Frame f) {
            f.ints[slot] = value.eval(f);
            body.run(f);
        }
    }

    static final class LetDouble extends ExecNode {
        final int slot;
        final DoubleNode value;
        final ExecNode body;

        LetDouble(int slot, DoubleNode value, ExecNode body) {
            this.slot = slot;
            this.value = value;
            this.body = body;
        }

        @Override
        void run(Frame f) {
            f.floats[slot] = value.eval(f);
            body.run(f);
        }
    }

    static final class Allocate extends ExecNode {
        final int buf;
        final int scratch;
        final long bytes;
        final ExecNode body;

        Allocate(int buf, int scratch, long bytes, ExecNode body) {
            this.buf = buf;
            this.scratch = scratch;
            this.bytes = bytes;
            this.body = body;
        }

        @Override
        void run(Frame f) {
            f.bufs[buf] = MemoryNodes.scratch(f, scratch, bytes);
            body.run(f);
        }
    }

    static final class EvalLong extends ExecNode {
        final LongNode value;

        EvalLong(LongNode value) {
            this.value = value;
        }

        @Override
        void run(Frame f) {
            value.eval(f);
        }
    }

    static final class EvalDouble extends ExecNode {
        final DoubleNode value;

        EvalDouble(DoubleNode value) {
            this.value = value;
        }

        @Override
        void run(Frame f) {
            value.eval(f);
        }
    }
}
