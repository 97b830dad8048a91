package dev.kiln.jit.jvm;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compiles a {@link PrimFunc} to a hidden class: bytecode with ASM ({@link BytecodeGen}), defined
 * with {@link MethodHandles.Lookup#defineHiddenClass} in this package (so it is unloaded with its
 * last kernel), then instantiated.
 */
final class JvmCompiler {
    private JvmCompiler() {}

    private static final System.Logger LOG = System.getLogger(JvmCompiler.class.getName());

    static CompiledClass compile(PrimFunc f, CpuTarget target) {
        for (Buffer p : f.params()) {
            try {
                p.constShape();
                p.constStrides();
            } catch (KilnException e) {
                throw new KilnException(
                        "function '" + f.name() + "': parameter " + e.getMessage()
                                + "; the JVM backend needs constant shapes and strides",
                        e);
            }
        }
        long t0 = System.nanoTime();
        int bits = Math.min(target.vectorBits(), VectorWidth.preferredBits());
        C1Exclusion.ensure();
        f = RegisterTiles.apply(f, bits);
        BytecodeGen gen = new BytecodeGen(f, target.cores(), bits, VectorWidth.AVAILABLE, target.fastMath());
        byte[] bytes = gen.generate();
        long t1 = System.nanoTime();
        KernelEntry entry;
        try {
            MethodHandles.Lookup l = MethodHandles.lookup().defineHiddenClass(bytes, true);
            entry = (KernelEntry) l.findConstructor(l.lookupClass(), MethodType.methodType(void.class))
                    .invoke();
        } catch (Throwable e) {
            throw new KilnException(
                    "function '" + f.name() + "': the generated class was rejected by the JVM: " + e, e);
        }
        long t2 = System.nanoTime();
        for (String n : gen.notes()) LOG.log(System.Logger.Level.DEBUG, "function '" + f.name() + "': " + n);
        return new CompiledClass(
                bytes,
                entry,
                gen.notes(),
                gen.promotions(),
                target,
                f.name(),
                written(f),
                (t1 - t0) / 1e6,
                (t2 - t1) / 1e6);
    }

    /** Which parameters the function stores to. */
    private static boolean[] written(PrimFunc f) {
        Map<Buffer, Integer> index = new IdentityHashMap<>();
        List<Buffer> ps = f.params();
        for (int i = 0; i < ps.size(); i++) index.put(ps.get(i).base(), i);
        boolean[] w = new boolean[ps.size()];
        Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof Store st) {
                Integer i = index.get(st.buffer().base());
                if (i != null) w[i] = true;
            }
        });
        return w;
    }
}
