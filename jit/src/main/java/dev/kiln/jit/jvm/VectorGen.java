package dev.kiln.jit.jvm;

import dev.kiln.tir.For;

/** Vectorized loops (placeholder while the vector generator is written). */
final class VectorGen {
    private VectorGen() {}

    static void loop(MethodGen g, For f) {
        g.cls.note("vectorized loop '" + f.var().name() + "' runs serially");
        StmtEmitter.serial(g, f, () -> StmtEmitter.emit(g, f.body()));
    }
}
