package dev.kiln.arith;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A tiny statement executor for the tests (not the project's interpreter): runs the loop IR
 * over flat arrays of numbers with {@link TestEval} for the expressions, so that a program and
 * its simplified form can be compared on the same inputs.
 */
public final class TestExec {
    private final Map<Buffer, Number[]> memory = new IdentityHashMap<>();
    private final Map<Var, Number> env = new HashMap<>();

    /** Runs {@code f} on fresh random inputs (seeded) and returns every parameter's final contents. */
    public static Map<Buffer, Number[]> run(PrimFunc f, long seed) {
        TestExec x = new TestExec();
        Random rnd = new Random(seed);
        for (Buffer b : f.params()) {
            Number[] data = new Number[size(b)];
            for (int k = 0; k < data.length; k++) {
                data[k] = b.dtype().isFloat()
                        ? (Number) (double) (float) (rnd.nextGaussian() * 10)
                        : (Number) TestEval.norm(b.dtype(), rnd.nextInt(200) - 100);
            }
            x.memory.put(b, data);
        }
        x.exec(f.body());
        return x.memory;
    }

    private static int size(Buffer b) {
        long n = 1;
        for (Expr d : b.shape()) n *= ((IntImm) d).value();
        return Math.toIntExact(n);
    }

    private int offset(Buffer b, List<Expr> idx) {
        long off = 0;
        TestEval ev = eval();
        for (int d = 0; d < idx.size(); d++) {
            long i = ev.i(idx.get(d)), extent = ((IntImm) b.shape().get(d)).value();
            if (i < 0 || i >= extent) throw new IllegalStateException("index " + i + " out of bounds in " + b.name());
            off += i * ((IntImm) b.strides().get(d)).value();
        }
        return Math.toIntExact(off);
    }

    private TestEval eval() {
        return new TestEval(env, (BufferLoad l) -> memory.get(l.buffer())[offset(l.buffer(), l.indices())]);
    }

    private void exec(Stmt s) {
        switch (s) {
            case For f -> {
                long lo = eval().i(f.min()), n = eval().i(f.extent());
                for (long v = lo; v < lo + n; v++) {
                    env.put(f.var(), v);
                    exec(f.body());
                }
                env.remove(f.var());
            }
            case Store st -> {
                Number v = eval().eval(st.value());
                if (st.buffer().dtype() == DType.FLOAT32) v = (double) (float) v.doubleValue();
                memory.get(st.buffer())[offset(st.buffer(), st.indices())] = v;
            }
            case Allocate a -> {
                memory.put(a.buffer(), new Number[size(a.buffer())]);
                exec(a.body());
                memory.remove(a.buffer());
            }
            case Seq q -> q.stmts().forEach(this::exec);
            case IfThenElse i -> {
                if (eval().i(i.cond()) != 0) exec(i.then());
                else if (i.otherwise() != null) exec(i.otherwise());
            }
            case Let l -> {
                env.put(l.var(), eval().eval(l.value()));
                exec(l.body());
                env.remove(l.var());
            }
            case Evaluate e -> eval().eval(e.value());
            case dev.kiln.tir.Pragma p -> exec(p.body());
            case dev.kiln.tir.Barrier b -> {}
        }
    }
}
