package dev.kiln.cuda;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.codegen.CudaOptions;
import dev.kiln.cuda.compile.CudaCompiler;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.GpuLimits;
import dev.kiln.lower.VerifyThreadBindings;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.Backend;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;

/**
 * The CUDA backend ({@link Backend} SPI, registered for {@link java.util.ServiceLoader}): CUDA C
 * from the GPU loop IR ({@link CudaCodegen}), PTX from NVRTC or nvcc ({@link CudaCompiler}, with a
 * disk cache), run through JCuda's driver API ({@link CudaKernel}). It claims every
 * {@link CudaTarget}, with or without a GPU: compiling needs a CUDA compiler only, running needs
 * the driver ({@link CudaDriver}).
 *
 * <p>The program must be lowered for the GPU ({@link dev.kiln.lower.GpuPasses#lower}): its loops
 * bound to blockIdx/threadIdx; its bindings are checked again against the target's limits
 * ({@link VerifyThreadBindings}) before code generation. The target's {@link CudaTarget#fastMath()}
 * selects CUDA's fast intrinsics; its architecture selects the PTX target.
 */
public final class CudaBackend implements Backend {
    private static final CudaCompiler COMPILER = CudaCompiler.withDefaultCache();

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public boolean supports(Target target) {
        return target instanceof CudaTarget;
    }

    @Override
    public CudaKernel compile(PrimFunc func, Target target) {
        if (!(target instanceof CudaTarget t)) {
            throw new KilnException("the CUDA backend compiles for CUDA targets, not for '" + target + "'");
        }
        return compile(func, t, CudaOptions.defaults().withFastMath(t.fastMath()));
    }

    /** The Tensor Core intrinsics ({@link CudaTensorIntrinsics}) when the target has compute capability 8.0. */
    @Override
    public java.util.Set<String> intrinsics(Target target) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        for (String n : CudaTensorIntrinsics.ALL) if (TensorIntrinsics.get(n).availableOn(target)) out.add(n);
        return out;
    }

    /** Compiles with explicit code generation options. */
    public CudaKernel compile(PrimFunc func, CudaTarget target, CudaOptions options) {
        checkIntrinsics(func, target);
        VerifyThreadBindings.apply(func, limits(target));
        CudaModule m = CudaCodegen.generate(func, options);
        CudaCompiler.Result ptx = COMPILER.compile(m, target.computeCapability());
        return new CudaKernel(func, target, m, ptx);
    }

    /** Refuses a tensorized program whose intrinsics the target's architecture lacks, naming them. */
    static void checkIntrinsics(PrimFunc func, CudaTarget target) {
        new dev.kiln.tir.StmtVisitor() {
            @Override
            public void visit(dev.kiln.tir.Stmt s) {
                if (s instanceof dev.kiln.tir.Pragma p && p.tensorIntrinsic() != null) {
                    String why = TensorIntrinsics.get(p.tensorIntrinsic()).unavailableReason(target);
                    if (why != null) throw new KilnException("function '" + func.name() + "': " + why);
                }
                visitChildren(s);
            }
        }.visit(func.body());
    }

    /** The target's limits as the GPU passes check them (vthread extent: Ansor's 8). */
    public static GpuLimits limits(CudaTarget target) {
        return GpuLimits.of(target);
    }

    /** The target of this machine's first GPU (its architecture and limits), or the reason there is none. */
    public static CudaTarget deviceTarget() {
        return CudaDevice.first().target();
    }
}
