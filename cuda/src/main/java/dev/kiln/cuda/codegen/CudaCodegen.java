package dev.kiln.cuda.codegen;

import dev.kiln.arith.ConstIntBound;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.lower.GpuKernel;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * CUDA C code generation for a lowered GPU program (one that went through
 * {@link dev.kiln.lower.GpuPasses#pipeline}): one {@code extern "C" __global__} function per
 * kernel, that is per outermost thread-bound loop ({@link GpuKernel}), launched in program order
 * with the grid and block its bindings give. Host code between kernels may only allocate global
 * buffers (temporaries the host allocates) and sequence kernels; anything else (a host loop, a
 * condition or a store outside every kernel) is refused with a message naming it.
 *
 * <p>The semantics are the interpreter's; see {@link ExprGen}, {@link CastGen}, {@link MathGen}
 * and {@link KernelGen} for how each construct is written. Each kernel's parameters are the global
 * buffers it uses, {@code __restrict__}, and {@code const} when it only reads them (the host gives
 * every argument its own device memory, so they never alias). {@code __launch_bounds__} states the
 * block size.
 */
public final class CudaCodegen {
    private CudaCodegen() {}

    /** Generates the module of {@code f} with {@link CudaOptions#defaults()}. */
    public static CudaModule generate(PrimFunc f) {
        return generate(f, CudaOptions.defaults());
    }

    public static CudaModule generate(PrimFunc f, CudaOptions options) {
        CudaNames names = new CudaNames();
        String fname = CudaNames.sanitize(f.name());
        List<Buffer> temporaries = new ArrayList<>();
        List<GpuKernel> kernels = new ArrayList<>();
        host(f, f.body(), temporaries, kernels);
        if (kernels.isEmpty()) {
            throw new KilnException(
                    "function '" + f.name() + "' has no kernel: bind its outer loops to blockIdx and threadIdx"
                            + " (a GPU program is made of thread-bound loop nests)");
        }
        List<Buffer> globals = new ArrayList<>();
        for (Buffer p : f.params()) globals.add(p.base());
        for (Buffer t : temporaries) globals.add(t.base());
        for (Buffer b : globals) names.buffer(b); // parameters keep their names first

        ConstIntBound bounds = VarRanges.of(f.body());
        ExprGen g = new ExprGen(f.name(), names, bounds, options.fastMath());
        List<Launch> launches = new ArrayList<>();
        StringBuilder kernelText = new StringBuilder();
        for (int k = 0; k < kernels.size(); k++) {
            GpuKernel kernel = kernels.get(k);
            String kname = names.reserve(fname + "_kernel" + k);
            Map<Buffer, Boolean> used = usedGlobals(kernel.root());
            List<Buffer> args = new ArrayList<>();
            List<Boolean> writes = new ArrayList<>();
            List<String> params = new ArrayList<>();
            for (Buffer b : globals) {
                Boolean w = used.get(b);
                if (w == null) continue;
                args.add(b);
                writes.add(w);
                g.dtypes.add(b.dtype());
                params.add((w ? "" : "const ") + CudaTypes.name(b.dtype()) + "* __restrict__ " + names.buffer(b));
            }
            for (Buffer b : used.keySet()) {
                if (!globals.contains(b)) {
                    throw new KilnException("function '" + f.name() + "', " + kernel.describe() + ": global buffer '"
                            + b.name() + "' is neither a parameter nor allocated by the host");
                }
            }
            String body = new KernelGen(f.name(), kernel, g, names, options).body();
            Launch launch = new Launch(kname, kernel, args, writes);
            long[] gr = launch.grid(), bl = launch.block();
            kernelText
                    .append("// ")
                    .append(kernel.describe())
                    .append(": grid (")
                    .append(gr[0])
                    .append(", ")
                    .append(gr[1])
                    .append(", ")
                    .append(gr[2])
                    .append("), block (")
                    .append(bl[0])
                    .append(", ")
                    .append(bl[1])
                    .append(", ")
                    .append(bl[2])
                    .append(")\n");
            kernelText
                    .append("extern \"C\" __global__ void __launch_bounds__(")
                    .append(launch.threadsPerBlock())
                    .append(") ")
                    .append(kname)
                    .append("(")
                    .append(String.join(", ", params))
                    .append(") {\n")
                    .append(body)
                    .append("}\n\n");
            launches.add(launch);
        }
        StringBuilder src = new StringBuilder();
        src.append("// CUDA C generated by Kiln for function '")
                .append(f.name())
                .append("'\n");
        src.append("// compile with: ")
                .append(String.join(" ", options.compileFlags()))
                .append('\n');
        if (g.dtypes.contains(DType.FLOAT16)) src.append("#include <cuda_fp16.h>\n");
        if (g.dtypes.contains(DType.BFLOAT16)) src.append("#include <cuda_bf16.h>\n");
        if (kernelText.indexOf("nvcuda::wmma::") >= 0) src.append("#include <mma.h>\n");
        src.append('\n');
        String helpers = Helper.definitions(g.helpers);
        if (!helpers.isEmpty()) src.append(helpers).append('\n');
        src.append(kernelText);
        boolean flag = g.helpers.contains(Helper.DIV_I32) || g.helpers.contains(Helper.DIV_I64);
        return new CudaModule(f, src.toString(), launches, temporaries, flag, options);
    }

    /** Walks host code: kernels and global allocations only. */
    private static void host(PrimFunc f, Stmt s, List<Buffer> temporaries, List<GpuKernel> kernels) {
        switch (s) {
            case For loop -> {
                if (loop.kind() != ForKind.THREAD_BOUND) {
                    throw hostCode(
                            f,
                            loop.kind().displayName() + " loop '" + loop.var().name() + "'");
                }
                kernels.add(GpuKernel.of(loop));
            }
            case Allocate a -> {
                if (a.buffer().scope() != MemoryScope.GLOBAL) {
                    throw new KilnException(
                            "function '" + f.name() + "': " + a.buffer().scope().displayName() + " buffer '"
                                    + a.buffer().name()
                                    + "' is allocated outside every kernel; run the GPU passes (plan-memory-scopes)");
                }
                a.buffer().flatView(); // a constant size, or a message naming the buffer
                temporaries.add(a.buffer().base());
                host(f, a.body(), temporaries, kernels);
            }
            case Seq q -> q.stmts().forEach(c -> host(f, c, temporaries, kernels));
            case Pragma p -> host(f, p.body(), temporaries, kernels);
            case IfThenElse i ->
                throw hostCode(f, "the condition 'if " + dev.kiln.ir.ExprPrinter.print(i.cond()) + "'");
            case Let l -> throw hostCode(f, "the let of '" + l.var().name() + "'");
            case Store st -> throw hostCode(f, "the store to '" + st.buffer().name() + "'");
            case Evaluate e -> throw hostCode(f, "an evaluate statement");
            case Barrier b -> throw hostCode(f, "a barrier");
        }
    }

    private static KilnException hostCode(PrimFunc f, String what) {
        return new KilnException("function '" + f.name() + "': " + what + " is host code outside every kernel; the CUDA"
                + " backend runs host code that only allocates buffers and launches kernels one after another"
                + " (bind the statement's loops to blockIdx/threadIdx, or fuse the loop into the kernel's "
                + "blockIdx loop)");
    }

    /** The global base buffers a kernel accesses, each with whether it is stored to. */
    private static Map<Buffer, Boolean> usedGlobals(Stmt s) {
        Map<Buffer, Boolean> out = new IdentityHashMap<>();
        collect(s, out);
        return out;
    }

    private static void collect(Stmt s, Map<Buffer, Boolean> out) {
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                if (x instanceof Store st && st.buffer().scope() == MemoryScope.GLOBAL)
                    out.put(st.buffer().base(), true);
                visitChildren(x);
            }

            @Override
            public void visitExpr(Expr e) {
                reads(e, out);
            }
        }.visit(s);
    }

    private static void reads(Expr e, Map<Buffer, Boolean> out) {
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad l && l.buffer().scope() == MemoryScope.GLOBAL)
                out.putIfAbsent(l.buffer().base(), false);
        });
    }
}
