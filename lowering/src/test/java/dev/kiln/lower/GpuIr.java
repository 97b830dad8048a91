package dev.kiln.lower;

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
import dev.kiln.tir.ThreadAxis;
import java.util.Arrays;
import java.util.List;

/** Hand-built loop IR for the GPU pass tests: small programs the schedules do not produce. */
final class GpuIr {
    private GpuIr() {}

    static Var v(String name) {
        return new Var(name, DType.INT32);
    }

    static IntImm c(long x) {
        return IntImm.i32(x);
    }

    /** A loop bound to a thread axis ("blockIdx.x", "threadIdx.x", "vthread"). */
    static For bind(String axis, Var var, long extent, Stmt... body) {
        return new For(var, c(0), c(extent), ForKind.THREAD_BOUND, ThreadAxis.parse(axis), Seq.of(body));
    }

    static For loop(ForKind kind, Var var, long extent, Stmt... body) {
        return new For(var, c(0), c(extent), kind, null, Seq.of(body));
    }

    static For serial(Var var, long extent, Stmt... body) {
        return loop(ForKind.SERIAL, var, extent, body);
    }

    static Buffer buf(String name, MemoryScope scope, long... shape) {
        return Buffer.rowMajor(name, DType.FLOAT32, Arrays.stream(shape).boxed().toList(), scope);
    }

    static Store store(Buffer b, Expr value, Expr... idx) {
        return new Store(b, List.of(idx), value);
    }

    static BufferLoad load(Buffer b, Expr... idx) {
        return new BufferLoad(b, List.of(idx));
    }

    static PrimFunc func(Stmt body, Buffer... params) {
        return new PrimFunc("f", List.of(params), body);
    }
}
