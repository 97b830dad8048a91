package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A {@link PrimFunc} to an LLVM module. The kernel is
 * {@code i32 @sym(ptr noalias align 64 %A, ...)}: one pointer per parameter buffer (inputs that
 * are never stored to are also {@code readonly}), returning the status word: 0, or the number of
 * the division site that saw a zero divisor, or a negative code for runtime failures. A second
 * entry {@code @sym_packed(ptr argv)} takes the pointers as an array, for callers with many
 * parameters.
 */
final class KernelGen {
    private KernelGen() {}

    /** What code generation produced for one function. */
    record Result(
            String symbol,
            String packedSymbol,
            String ir,
            List<String> divisionSites,
            List<Long> heapTemporaries,
            List<String> notes,
            boolean[] written,
            boolean parallel,
            long work) {}

    static Result generate(PrimFunc f, CpuTarget target, JitOptions options, String symbol) {
        for (Buffer b : f.params()) {
            try {
                b.constShape();
                b.constStrides();
            } catch (KilnException e) {
                throw new KilnException("function '" + f.name() + "': parameter '" + b.name()
                        + "' needs a constant shape and strides for the LLVM backend: " + e.getMessage());
            }
        }
        ModuleBuilder mod = new ModuleBuilder(f.name());
        Set<Buffer> stored = dev.kiln.tir.Stmts.stored(f.body());
        boolean[] written = new boolean[f.params().size()];
        List<String> params = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            written[i] = stored.contains(f.params().get(i));
            params.add("ptr noalias " + (written[i] ? "" : "readonly ") + "align 64 %p" + i);
        }
        FnBuilder fn = new FnBuilder("define i32 @" + symbol + "(" + String.join(", ", params) + ") nounwind");
        fn.comment("kernel for function '" + f.name() + "'");
        CodeGen g = new CodeGen(mod, target, options, symbol, f.name());
        g.fn = fn;
        g.status = fn.alloca("i32", 4);
        fn.line("store i32 0, ptr " + g.status + ", align 4");
        for (int i = 0; i < f.params().size(); i++) g.buffers.put(f.params().get(i), "%p" + i);
        StmtGen.gen(g, f.body());
        String st = fn.emit("load atomic i32, ptr " + g.status + " monotonic, align 4");
        fn.ret("i32 " + st);
        mod.add(fn);

        String packed = symbol + "_packed";
        FnBuilder pk = new FnBuilder("define i32 @" + packed + "(ptr %argv) nounwind");
        List<String> args = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            String p = pk.emit("getelementptr inbounds ptr, ptr %argv, i64 " + i);
            args.add("ptr " + pk.emit("load ptr, ptr " + p + ", align 8"));
        }
        String r = pk.emit("call i32 @" + symbol + "(" + String.join(", ", args) + ")");
        pk.ret("i32 " + r);
        mod.add(pk);

        boolean parallel = hasParallel(f);
        return new Result(
                symbol,
                packed,
                mod.text(),
                List.copyOf(g.divisionSites),
                g.heapTemporaries.stream().distinct().sorted().toList(),
                mod.notes(),
                written,
                parallel,
                WorkEstimate.of(f.body()));
    }

    private static boolean hasParallel(PrimFunc f) {
        boolean[] found = {false};
        dev.kiln.tir.Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof dev.kiln.tir.For l && l.kind() == dev.kiln.tir.ForKind.PARALLEL) found[0] = true;
        });
        return found[0];
    }
}
