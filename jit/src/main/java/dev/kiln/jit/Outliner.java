package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import java.util.ArrayList;
import java.util.List;

/**
 * A parallel loop becomes two functions and a runtime call. The body goes into
 * {@code <kernel>_parN_impl(buffers..., values..., status, min, begin, end)}, which runs the
 * iterations {@code [begin, end)} with every buffer pointer a {@code noalias} parameter (so the
 * optimiser keeps its alias facts); a trampoline {@code <kernel>_parN(ctx, begin, end)} unpacks
 * the captured values from a stack array {@code ctx} and calls it. The kernel fills {@code ctx}
 * and calls the chosen {@link ParallelRuntime} with the trampoline, the trip count and the
 * estimated work of one iteration.
 */
final class Outliner {
    private Outliner() {}

    static void parallel(CodeGen g, For f) {
        Val min = ExprGen.gen(g, f.min());
        Val ext = ExprGen.gen(g, f.extent());
        List<Buffer> bufs = new ArrayList<>();
        for (Buffer b : StmtWalk.buffers(f.body())) if (g.buffers.containsKey(b)) bufs.add(b);
        List<Var> vars = new ArrayList<>();
        for (Var v : StmtWalk.vars(f.body())) if (v != f.var() && g.vars.containsKey(v)) vars.add(v);
        DType t = f.var().dtype();
        String ty = IrTypes.reg(t);

        String tramp = g.outlinedName("par");
        String impl = tramp + "_impl";
        emitImpl(g, f, impl, bufs, vars);
        emitTrampoline(g, tramp, impl, bufs, vars, ty);

        // the caller: pack the captured values, call the runtime
        int slots = bufs.size() + vars.size() + 2;
        String ctx = g.fn.alloca("[" + slots + " x i64]", 8);
        int k = 0;
        for (Buffer b : bufs) storeSlot(g, ctx, slots, k++, "ptr", g.buffer(b));
        for (Var v : vars)
            storeSlot(g, ctx, slots, k++, IrTypes.reg(v.dtype()), g.var(v).ref());
        storeSlot(g, ctx, slots, k++, "ptr", g.status);
        storeSlot(g, ctx, slots, k, ty, min.ref());
        String n = t == DType.INT64
                ? ext.ref()
                : g.fn.emit((t.isUnsigned() ? "zext " : "sext ") + ty + " " + ext.ref() + " to i64");
        long cost = Math.max(1, WorkEstimate.of(f.body()));
        String rt = runtimeSymbol(g.options.runtime());
        g.mod.declare(rt, "i32", "ptr, ptr, i64, i64");
        String r =
                g.fn.emit("call i32 @" + rt + "(ptr @" + tramp + ", ptr " + ctx + ", i64 " + n + ", i64 " + cost + ")");
        String failed = g.fn.emit("icmp ne i32 " + r + ", 0");
        String bad = g.fn.label("rtfail"), ok = g.fn.label("rtok");
        g.fn.condBr(failed, bad, ok);
        g.fn.block(bad);
        g.setStatus(StmtGen.RUNTIME_FAILED);
        g.fn.br(ok);
        g.fn.block(ok);
    }

    /** The symbol a kernel calls for parallel loops under {@code r}. */
    static String runtimeSymbol(ParallelRuntime r) {
        return switch (r) {
            case NATIVE_POOL -> NativePool.PARALLEL_FOR;
            case JAVA_POOL -> JavaPool.PARALLEL_FOR;
        };
    }

    private static void storeSlot(CodeGen g, String ctx, int slots, int k, String type, String value) {
        String p = g.fn.emit("getelementptr inbounds [" + slots + " x i64], ptr " + ctx + ", i64 0, i64 " + k);
        g.fn.line("store " + type + " " + value + ", ptr " + p + ", align 8");
    }

    private static void emitImpl(CodeGen g, For f, String impl, List<Buffer> bufs, List<Var> vars) {
        DType t = f.var().dtype();
        String ty = IrTypes.reg(t);
        List<String> params = new ArrayList<>();
        for (int i = 0; i < bufs.size(); i++) params.add("ptr noalias align 64 %b" + i);
        for (int i = 0; i < vars.size(); i++) params.add(IrTypes.reg(vars.get(i).dtype()) + " %v" + i);
        params.add("ptr %status");
        params.add(ty + " %min");
        params.add("i64 %begin");
        params.add("i64 %end");
        FnBuilder fb = new FnBuilder("define internal void @" + impl + "(" + String.join(", ", params) + ") nounwind");
        fb.comment("body of parallel loop '" + f.var().name() + "' of function '" + g.funcName + "'");
        CodeGen c = g.child(fb);
        c.inParallel = true;
        c.status = "%status";
        for (int i = 0; i < bufs.size(); i++) c.buffers.put(bufs.get(i), "%b" + i);
        for (int i = 0; i < vars.size(); i++)
            c.vars.put(vars.get(i), Val.uniform("%v" + i, vars.get(i).dtype()));
        // for (k = begin; k < end; k++) { var = min + k; body }
        String pre = fb.currentBlock();
        String header = fb.label("ploop"),
                body = fb.label("pbody"),
                latch = fb.label("platch"),
                exit = fb.label("pexit");
        fb.br(header);
        fb.block(header);
        String k = fb.tmp(), next = fb.tmp();
        fb.line(k + " = phi i64 [ %begin, %" + pre + " ], [ " + next + ", %" + latch + " ]");
        String more = fb.emit("icmp slt i64 " + k + ", %end");
        fb.condBr(more, body, exit);
        fb.block(body);
        String kt = t == DType.INT64 ? k : fb.emit("trunc i64 " + k + " to " + ty);
        String iv = fb.emit("add nsw " + ty + " %min, " + kt);
        StmtGen.bind(c, f.var(), Val.uniform(iv, t), () -> StmtGen.gen(c, f.body()));
        fb.br(latch);
        fb.block(latch);
        fb.line(next + " = add nsw i64 " + k + ", 1");
        fb.br(header);
        fb.block(exit);
        fb.ret("void");
        g.mod.add(fb);
    }

    private static void emitTrampoline(
            CodeGen g, String tramp, String impl, List<Buffer> bufs, List<Var> vars, String minType) {
        FnBuilder fb = new FnBuilder("define internal void @" + tramp + "(ptr %ctx, i64 %begin, i64 %end) nounwind");
        int slots = bufs.size() + vars.size() + 2;
        List<String> args = new ArrayList<>();
        int k = 0;
        for (int i = 0; i < bufs.size(); i++) args.add("ptr " + loadSlot(fb, slots, k++, "ptr"));
        for (Var v : vars) {
            String ty = IrTypes.reg(v.dtype());
            args.add(ty + " " + loadSlot(fb, slots, k++, ty));
        }
        args.add("ptr " + loadSlot(fb, slots, k++, "ptr"));
        args.add(minType + " " + loadSlot(fb, slots, k, minType));
        args.add("i64 %begin");
        args.add("i64 %end");
        fb.line("call void @" + impl + "(" + String.join(", ", args) + ")");
        fb.ret("void");
        g.mod.add(fb);
    }

    private static String loadSlot(FnBuilder fb, int slots, int k, String type) {
        String p = fb.emit("getelementptr inbounds [" + slots + " x i64], ptr %ctx, i64 0, i64 " + k);
        return fb.emit("load " + type + ", ptr " + p + ", align 8");
    }
}
