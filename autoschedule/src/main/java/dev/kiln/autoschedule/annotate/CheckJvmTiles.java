package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.JvmRegisterTiles;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeOp;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The last annotation rule of the pure-JVM target ({@code TargetRules.jvm()}): refuses a sample whose register tile the
 * JVM backend cannot keep in vector locals, so that it is never measured. In every reduction stage, the loops inside
 * its innermost reduction loop form the register tile (Ansor's {@code i.3 j.3} under {@code k.1}); when the innermost
 * of them is vectorized, the sample is refused if
 *
 * <ul>
 *   <li>that loop's extent is not a multiple of the species length (vector bits / element bits; only where the stage's
 *       last spatial axis is such a multiple, so some tile always fits): the JVM backend runs a partial vector as a
 *       masked Vector API loop, and such programs ran 10-300x slower than the fast ones of the same log;
 *   <li>the rows around it (the product of the other tile loops' extents) are more than {@link #MAX_ROWS}, or the
 *       tile holds more than {@link #maxVectors} vectors: the generator's {@code RegisterTiles} (module jit) unrolls
 *       only such tiles, and {@code Promotion} keeps only that many vectors in locals, so a larger tile stays in
 *       memory.
 *   <li>the stage is the kernel's output at root, accumulating straight into its output buffer (a sketch without
 *       cache write): of 14 such programs in two JVM tuning logs of GEMM 1024, none ran under 376 ms (the fast ones
 *       with a cache write: 20-57 ms); the JVM backend promotes those accumulators rarely, and measuring them cost up
 *       to 90 s per trial.
 * </ul>
 *
 * <p>The two limits are the generator's own ({@link JvmRegisterTiles}, read by jit's {@code RegisterTiles} and
 * {@code Promotion} too). Evolution's children pass the same check ({@code Children.of}).
 */
public record CheckJvmTiles() implements InitRule {
    public static final String NAME = "CheckJvmTiles";

    /** Most rows of a tile the JVM backend unrolls ({@link JvmRegisterTiles#MAX_ROWS}). */
    public static final long MAX_ROWS = JvmRegisterTiles.MAX_ROWS;

    /** Most vectors a tile may hold in the JVM backend's locals ({@link JvmRegisterTiles#maxVectors}). */
    public static int maxVectors(int vectorBits) {
        return JvmRegisterTiles.maxVectors(vectorBits);
    }

    /** Whether {@code target} is the pure-JVM backend's (a CPU target whose triple is {@code jvm}). */
    public static boolean isJvm(Target target) {
        return target instanceof CpuTarget c && "jvm".equals(c.triple());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        if (!(task.target() instanceof CpuTarget cpu)) {
            throw new KilnException(NAME + " needs a CPU target, not " + task.target());
        }
        LoopState s;
        try {
            s = InferBound.apply(state);
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
        for (Stage st : s.stages()) {
            if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
            String why = refusal(st, cpu.vectorBits());
            if (why != null) throw new InvalidSample(NAME, "stage '" + st.name() + "': " + why);
        }
        return state;
    }

    /** Why the JVM backend cannot keep {@code st}'s register tile in vector locals, or null if it can. */
    static String refusal(Stage st, int vectorBits) {
        List<Iter> iters = st.iters();
        int lastReduce = -1;
        for (int i = 0; i < iters.size(); i++) if (iters.get(i).kind() == IterKind.REDUCE) lastReduce = i;
        if (lastReduce < 0 || lastReduce == iters.size() - 1) return null;
        Iter vec = iters.get(iters.size() - 1);
        if (vec.annotation() != IterAnnotation.VECTORIZE || !vec.hasExtent()) return null;
        if (st.output() && st.scope() != MemoryScope.LOCAL && st.computeAt() == ComputeAtKind.ROOT) {
            return "its register tile accumulates into the output buffer (no cache write)";
        }
        int bits = st.op().output(0).dtype().bits();
        int lanes = Math.max(1, vectorBits / bits);
        long extent = vec.extent();
        if (extent % lanes != 0) {
            return lastAxisFits(st, lanes)
                    ? "vectorized tile loop '" + vec.name() + "' of " + extent + " is not a multiple of " + lanes
                            + " lanes"
                    : null;
        }
        long rows = 1;
        for (int i = lastReduce + 1; i < iters.size() - 1; i++) {
            Iter it = iters.get(i);
            if (!it.hasExtent()) return null;
            rows *= it.extent();
        }
        long vectors = rows * (extent / lanes);
        if (rows > MAX_ROWS) return "register tile of " + rows + " rows (at most " + MAX_ROWS + " are unrolled)";
        if (vectors > maxVectors(vectorBits)) {
            return "register tile of " + rows + " x " + (extent / lanes) + " vectors (at most " + maxVectors(vectorBits)
                    + " stay in locals)";
        }
        return null;
    }

    /** Whether the stage's last spatial axis is a multiple of {@code lanes}, so a tile of whole vectors exists. */
    private static boolean lastAxisFits(Stage st, int lanes) {
        if (!(st.op() instanceof ComputeOp op)) return false;
        List<IterVar> axes = op.axes();
        return !axes.isEmpty() && axes.get(axes.size() - 1).extent() % lanes == 0;
    }
}
