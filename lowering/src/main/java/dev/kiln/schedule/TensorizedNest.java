package dev.kiln.schedule;

import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of a {@code tensorize$<name>} pragma as its intrinsic declares it: one serial loop per pattern axis, of the
 * pattern's extents, outermost first (the output's spatial axes, then its reduce axes), around one store. What every
 * reader of a tensorized nest checks first: the verifier's {@code TENSORIZED_NESTS} rule after each lowering pass,
 * and the backends that replace the nest by an instruction (the LLVM backend's CPU intrinsics, the CUDA backend's
 * wmma fragments).
 *
 * @param intrinsic the pragma's intrinsic
 * @param loops     the nest's loops, outermost first
 * @param store     the store they enclose
 */
public record TensorizedNest(TensorIntrinsic intrinsic, List<For> loops, Store store) {
    public TensorizedNest {
        loops = List.copyOf(loops);
    }

    /**
     * Reads the nest under {@code p}, whose intrinsic is {@code in}; throws a KilnException that begins with
     * {@code where} and names the loop that is not the pattern's, or the statement that is not one store.
     */
    public static TensorizedNest read(Pragma p, TensorIntrinsic in, String where) {
        List<Long> ext = in.loopExtents();
        List<For> loops = new ArrayList<>();
        Stmt s = p.body();
        for (int i = 0; i < ext.size(); i++) {
            if (!(s instanceof For f
                    && f.kind() == ForKind.SERIAL
                    && f.extent() instanceof IntImm e
                    && e.value() == ext.get(i))) {
                String what = s instanceof For f
                        ? "loop '" + f.var().name() + "'"
                        : "a " + s.getClass().getSimpleName();
                throw new KilnException(where + ": " + what + " is not the pattern's loop " + i + " (extent "
                        + ext.get(i) + ", serial); the nest must be the loops " + ext + " around one store");
            }
            loops.add(f);
            s = f.body();
        }
        if (!(s instanceof Store st)) {
            throw new KilnException(where + ": the nest's " + ext.size() + " loops hold a "
                    + s.getClass().getSimpleName() + ", not one store");
        }
        return new TensorizedNest(in, loops, st);
    }
}
