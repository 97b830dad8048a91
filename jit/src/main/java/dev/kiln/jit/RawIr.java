package dev.kiln.jit;

import dev.kiln.target.CpuTarget;
import java.util.List;

/**
 * Hand-written LLVM IR text compiled by Kiln's own ORC JIT for a CPU target (parsed, verified,
 * optimised at O3 for the target's machine), for probes such as a benchmark's instruction-peak
 * loop. {@link #address} is the function's entry; call it through Panama. {@link #close()}
 * frees the code and the JIT; the address must not be called after.
 */
public final class RawIr implements AutoCloseable {
    private final OrcJit jit;
    private final JitModule module;
    private final String symbol;

    private RawIr(OrcJit jit, JitModule module, String symbol) {
        this.jit = jit;
        this.module = module;
        this.symbol = symbol;
    }

    /** Compiles module {@code ir} for {@code target} and looks up function {@code symbol}. */
    public static RawIr compile(CpuTarget target, String what, String ir, String symbol) {
        OrcJit jit = new OrcJit(target);
        try {
            return new RawIr(jit, jit.add(what, ir, List.of(symbol), true), symbol);
        } catch (RuntimeException e) {
            jit.close();
            throw e;
        }
    }

    /** The entry address of the function. */
    public long address() {
        return module.address(symbol);
    }

    /** The target's assembly of the optimised module (to check which instructions the loop uses). */
    public String assembly() {
        return jit.assembly(symbol, module.optimizedIr());
    }

    @Override
    public void close() {
        module.close();
        jit.close();
    }
}
