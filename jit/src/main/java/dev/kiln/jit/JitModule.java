package dev.kiln.jit;

import java.util.Map;
import org.bytedeco.llvm.LLVM.LLVMOrcResourceTrackerRef;

/**
 * Machine code of one module in an {@link OrcJit}: the addresses of its symbols and its
 * optimised IR. It owns the code: {@link #close()} removes it from the JIT, after which the
 * addresses must not be called.
 */
final class JitModule implements AutoCloseable {
    private final OrcJit jit;
    private final LLVMOrcResourceTrackerRef tracker;
    private final Map<String, Long> symbols;
    private final String optimizedIr;
    private final CompileTimes times;
    private boolean closed;

    JitModule(
            OrcJit jit,
            LLVMOrcResourceTrackerRef tracker,
            Map<String, Long> symbols,
            String optimizedIr,
            CompileTimes times) {
        this.jit = jit;
        this.tracker = tracker;
        this.symbols = Map.copyOf(symbols);
        this.optimizedIr = optimizedIr;
        this.times = times;
    }

    long address(String symbol) {
        Long a = symbols.get(symbol);
        if (a == null)
            throw new IllegalArgumentException("symbol " + symbol + " was not looked up; have " + symbols.keySet());
        return a;
    }

    String optimizedIr() {
        return optimizedIr;
    }

    CompileTimes times() {
        return times;
    }

    OrcJit jit() {
        return jit;
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        jit.remove(tracker);
    }
}
