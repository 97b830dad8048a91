package dev.kiln.jit;

import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.TensorIntrinsic;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizedNest;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.For;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The LLVM backend's implementations of tensor intrinsics ({@link TensorIntrinsics}), keyed by the
 * intrinsic's name: each replaces a {@code tensorize$<name>} nest by LLVM's own x86 intrinsic. The
 * nest is the pattern as the lowering emits it (the tensorize step checked its loops, body and
 * layout): one loop per pattern axis around one accumulating store; the operands' first elements
 * are the nest's loads and store with every loop at 0.
 */
final class CpuIntrinsics {
    private CpuIntrinsics() {}

    /** Emits one intrinsic's nest. */
    private interface Impl {
        void emit(CodeGen g, Operands ops);
    }

    /**
     * The nest's operands: the accumulator's store, then the pattern inputs' loads, in pattern order; the nest's
     * loops (each bound to 0 while the implementation emits).
     */
    private record Operands(Store acc, List<BufferLoad> inputs, List<For> loops) {}

    private static final Map<String, Impl> IMPLS = impls();

    private static Map<String, Impl> impls() {
        Map<String, Impl> m = new java.util.HashMap<>();
        m.put(TensorIntrinsics.VNNI_U8S8, (g, o) -> dot(g, o, "llvm.x86.avx512.vpdpbusd.512", "<16 x i32>", "i32"));
        m.put(
                TensorIntrinsics.BF16_DOT,
                (g, o) -> dot(g, o, "llvm.x86.avx512bf16.dpbf16ps.512", "<32 x bfloat>", "float"));
        for (int n : AmxTensorIntrinsics.STEPS) {
            m.put(AmxTensorIntrinsics.bf16(n), (g, o) -> amx(g, o, "llvm.x86.tdpbf16ps.internal", n));
            m.put(AmxTensorIntrinsics.u8s8(n), (g, o) -> amx(g, o, "llvm.x86.tdpbusd.internal", n));
        }
        return Map.copyOf(m);
    }

    /** The intrinsics this backend implements that {@code target} has the features for. */
    static Set<String> available(CpuTarget target) {
        Set<String> out = new TreeSet<>();
        for (String n : IMPLS.keySet()) if (TensorIntrinsics.get(n).availableOn(target)) out.add(n);
        return out;
    }

    /** Emits the tensorized nest under {@code p}, or throws naming the intrinsic and why not. */
    static void emit(CodeGen g, Pragma p) {
        String name = p.tensorIntrinsic();
        Impl impl = IMPLS.get(name);
        String where = "function '" + g.funcName + "': tensor intrinsic '" + name + "'";
        if (impl == null) {
            throw new KilnException(where + " has no LLVM implementation; it implements " + IMPLS.keySet());
        }
        TensorIntrinsic in = TensorIntrinsics.get(name);
        String why = in.unavailableReason(g.target);
        if (why != null) throw new KilnException(where + ": " + why);
        if (g.lanes > 1) throw new KilnException(where + " sits inside a vectorized loop");
        TensorizedNest nest = TensorizedNest.read(p, in, where);
        List<For> loops = nest.loops();
        Store st = nest.store();
        List<BufferLoad> loads = new ArrayList<>();
        Exprs.forEach(st.value(), e -> {
            if (e instanceof BufferLoad l && l.buffer().base() != st.buffer().base()) loads.add(l);
        });
        if (loads.size() != in.pattern().inputs().size()) {
            throw new KilnException(where + ": the nest reads " + loads.size() + " operands, the pattern "
                    + in.pattern().inputs().size());
        }
        // every loop of the nest at 0: the operands' first elements
        Map<dev.kiln.ir.Var, Val> saved = new java.util.IdentityHashMap<>();
        for (For f : loops)
            saved.put(f.var(), g.vars.put(f.var(), Val.uniform("0", f.var().dtype())));
        try {
            impl.emit(g, new Operands(st, loads, loops));
        } finally {
            for (For f : loops) {
                Val prev = saved.get(f.var());
                if (prev == null) g.vars.remove(f.var());
                else g.vars.put(f.var(), prev);
            }
        }
    }

    private static String address(CodeGen g, dev.kiln.ir.Buffer b, List<dev.kiln.ir.Expr> idx) {
        Val off = Memory.offset(g, b, ExprGen.indices(g, idx));
        return g.fn.emit(
                "getelementptr inbounds " + IrTypes.mem(b.dtype()) + ", ptr " + g.buffer(b) + ", i64 " + off.ref());
    }

    /**
     * A 16-lane dot-product instruction: {@code acc[j] += sum_k A[k] * B[j, k]} with A's group of
     * k (32 bits) broadcast to every lane and B's 64 bytes loaded whole; unaligned loads and stores.
     */
    private static void dot(CodeGen g, Operands o, String intrinsic, String opType, String accElem) {
        String accTy = "<16 x " + accElem + ">";
        g.mod.declare(intrinsic, accTy, accTy + ", " + opType + ", " + opType, "nounwind readnone");
        String accPtr = address(g, o.acc().buffer(), o.acc().indices());
        String acc = g.fn.emit("load " + accTy + ", ptr " + accPtr + ", align 4");
        BufferLoad a = o.inputs().get(0), b = o.inputs().get(1);
        String aPtr = address(g, a.buffer(), a.indices());
        String a32 = g.fn.emit("load i32, ptr " + aPtr + ", align 1");
        String a1 = g.fn.emit("insertelement <16 x i32> poison, i32 " + a32 + ", i64 0");
        String aAll = g.fn.emit("shufflevector <16 x i32> " + a1 + ", <16 x i32> poison, <16 x i32> zeroinitializer");
        String bPtr = address(g, b.buffer(), b.indices());
        String bv = g.fn.emit("load <16 x i32>, ptr " + bPtr + ", align 1");
        String av = aAll, bw = bv;
        if (!opType.equals("<16 x i32>")) {
            av = g.fn.emit("bitcast <16 x i32> " + aAll + " to " + opType);
            bw = g.fn.emit("bitcast <16 x i32> " + bv + " to " + opType);
        }
        String r = g.fn.emit("call " + accTy + " @" + intrinsic + "(" + accTy + " " + acc + ", " + opType + " " + av
                + ", " + opType + " " + bw + ")");
        g.fn.line("store " + accTy + " " + r + ", ptr " + accPtr + ", align 4");
        checkTypes(o, intrinsic);
    }

    /**
     * AMX tile multiplies: C's tile loaded, multiplied into by {@code steps} pairs of A and B tiles (A's next 64
     * bytes of each row, B's next 16 rows), stored back once (A and C with the strides their rows lie apart, B's
     * rows dense), all through LLVM's shape-carrying {@code .internal} tile intrinsics, from which LLVM's tile
     * configuration passes emit the kernel's {@code ldtilecfg}. The tile state must be permitted for the process
     * first ({@link AmxPermission}; requested here when the host can run the kernel).
     */
    private static void amx(CodeGen g, Operands o, String intrinsic, int steps) {
        if (AmxPermission.hostHasAmx()) AmxPermission.request();
        String tile = "x86_amx";
        g.mod.declare("llvm.x86.tileloadd64.internal", tile, "i16, i16, ptr, i64", "nounwind");
        g.mod.declare("llvm.x86.tilestored64.internal", "void", "i16, i16, ptr, i64, " + tile, "nounwind");
        g.mod.declare(intrinsic, tile, "i16, i16, i16, " + tile + ", " + tile + ", " + tile, "nounwind");
        String shape = "i16 " + AmxTensorIntrinsics.ROWS + ", i16 " + AmxTensorIntrinsics.ROW_BYTES;
        BufferLoad a = o.inputs().get(0), b = o.inputs().get(1);
        String cPtr = address(g, o.acc().buffer(), o.acc().indices());
        String cStride = rowStride(g, o, o.acc().buffer(), o.acc().indices(), cPtr);
        String aPtr = address(g, a.buffer(), a.indices());
        String aStride = rowStride(g, o, a.buffer(), a.indices(), aPtr);
        String bPtr = address(g, b.buffer(), b.indices());
        String c = g.fn.emit("call " + tile + " @llvm.x86.tileloadd64.internal(" + shape + ", ptr " + cPtr + ", i64 "
                + cStride + ")");
        String r = c;
        int bTileBytes = AmxTensorIntrinsics.ROWS * AmxTensorIntrinsics.ROW_BYTES;
        for (int step = 0; step < steps; step++) {
            String as = g.fn.emit(
                    "getelementptr inbounds i8, ptr " + aPtr + ", i64 " + (long) step * AmxTensorIntrinsics.ROW_BYTES);
            String bs = g.fn.emit("getelementptr inbounds i8, ptr " + bPtr + ", i64 " + (long) step * bTileBytes);
            String at = g.fn.emit("call " + tile + " @llvm.x86.tileloadd64.internal(" + shape + ", ptr " + as + ", i64 "
                    + aStride + ")");
            String bt = g.fn.emit("call " + tile + " @llvm.x86.tileloadd64.internal(" + shape + ", ptr " + bs + ", i64 "
                    + AmxTensorIntrinsics.ROW_BYTES + ")");
            r = g.fn.emit("call " + tile + " @" + intrinsic + "(" + shape + ", i16 " + AmxTensorIntrinsics.ROW_BYTES
                    + ", " + tile + " " + r + ", " + tile + " " + at + ", " + tile + " " + bt + ")");
        }
        g.fn.line("call void @llvm.x86.tilestored64.internal(" + shape + ", ptr " + cPtr + ", i64 " + cStride + ", "
                + tile + " " + r + ")");
        checkTypes(o, intrinsic);
    }

    /**
     * The bytes between rows of a strided tile operand: its address with the nest's first loop (the tile's rows) at
     * 1, less its address at 0 ({@code first}).
     */
    private static String rowStride(
            CodeGen g, Operands o, dev.kiln.ir.Buffer buf, List<dev.kiln.ir.Expr> idx, String first) {
        dev.kiln.ir.Var row = o.loops().getFirst().var();
        Val prev = g.vars.put(row, Val.uniform("1", row.dtype()));
        try {
            String next = address(g, buf, idx);
            String p0 = g.fn.emit("ptrtoint ptr " + first + " to i64");
            String p1 = g.fn.emit("ptrtoint ptr " + next + " to i64");
            return g.fn.emit("sub i64 " + p1 + ", " + p0);
        } finally {
            g.vars.put(row, prev);
        }
    }

    private static void checkTypes(Operands o, String intrinsic) {
        DType acc = o.acc().buffer().dtype();
        boolean ok = intrinsic.contains("vpdpbusd") || intrinsic.contains("tdpbusd")
                ? acc == DType.INT32
                        && o.inputs().get(0).buffer().dtype() == DType.UINT8
                        && o.inputs().get(1).buffer().dtype() == DType.INT8
                : acc == DType.FLOAT32
                        && o.inputs().get(0).buffer().dtype() == DType.BFLOAT16
                        && o.inputs().get(1).buffer().dtype() == DType.BFLOAT16;
        if (!ok) throw new KilnException(intrinsic + " got operands of the wrong types: " + o);
    }
}
