package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** Hand-built loop programs for the tests of both CPU backends (LLVM and JVM). */
public final class Funcs {
    private Funcs() {}

    public static Buffer buf(String name, DType t, long... shape) {
        List<Long> s = new ArrayList<>();
        for (long d : shape) s.add(d);
        return Buffer.rowMajor(name, t, s, MemoryScope.GLOBAL);
    }

    public static Expr load(Buffer b, Expr... idx) {
        return new BufferLoad(b, List.of(idx));
    }

    public static Stmt store(Buffer b, Expr value, Expr... idx) {
        return new Store(b, List.of(idx), value);
    }

    public static IntImm i32(long v) {
        return IntImm.i32(v);
    }

    public static For loop(Var v, long extent, ForKind kind, Stmt body) {
        return new For(v, IntImm.i32(0), IntImm.i32(extent), kind, null, body);
    }

    /**
     * {@code out_k[i] = ops[k](in_0[i], in_1[i], ...)} for i in [0, n), over a loop of the given
     * kind; the parameters are the inputs, then one output per op.
     */
    public static PrimFunc elementwise(
            String name, ForKind kind, int n, List<DType> inputs, List<Function<List<Expr>, Expr>> ops) {
        Var i = new Var("i");
        List<Buffer> params = new ArrayList<>();
        List<Expr> loads = new ArrayList<>();
        for (int k = 0; k < inputs.size(); k++) {
            Buffer b = buf("in" + k, inputs.get(k), n);
            params.add(b);
            loads.add(load(b, i));
        }
        List<Stmt> stores = new ArrayList<>();
        for (int k = 0; k < ops.size(); k++) {
            Expr e = ops.get(k).apply(loads);
            Buffer o = buf("out" + k, e.dtype(), n);
            params.add(o);
            stores.add(store(o, e, i));
        }
        return new PrimFunc(name, params, loop(i, n, kind, Seq.of(stores)));
    }
}
