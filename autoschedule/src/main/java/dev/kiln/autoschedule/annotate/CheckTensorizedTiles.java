package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.target.CpuTarget;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The last annotation rule on CPUs (and a check of evolution's children, {@code Children.of}): refuses a sample whose
 * tensorized register tile does not fit the vector registers, so that it is never compiled or measured. The loops
 * between a tensorized stage's last reduction loop and its tensorized nest form the tile: each iteration is one
 * accumulator vector (a dot-product instruction's 16 int32 or float32 lanes), the innermost of those loops counts the
 * operand vectors loaded once per reduction step and reused across the rows, and one more register holds the
 * broadcast; a tile needs {@code accumulators + vectors + 1 <= R} ({@code HardwareParams.vectorRegisters}, as
 * {@link RegisterTileSizes#fits} counts). Such tiles come from the uniform draw and from mutations; in a one-task int8
 * conv tune (layer 1's 1x1, 443 programs) the 14% of programs over the registers took 30% of the LLVM compile time
 * (up to 6 s each, the spills and unrolled bodies) and none ran within 1.5x of the best. AMX tiles (tile registers,
 * not zmm vectors) are not checked.
 */
public record CheckTensorizedTiles() implements InitRule {
    public static final String NAME = "CheckTensorizedTiles";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        if (!(task.target() instanceof CpuTarget)) return state;
        if (state.stages().stream().noneMatch(CheckTensorizedTiles::checked)) return state;
        LoopState s;
        try {
            s = InferBound.apply(state);
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
        String why = refusal(s, task.hardware().vectorRegisters());
        if (why != null) throw new InvalidSample(NAME, why);
        return state;
    }

    /** Why a tensorized tile of {@code inferred} (bounds inferred) does not fit {@code registers}, or null. */
    public static String refusal(LoopState inferred, int registers) {
        for (Stage st : inferred.stages()) {
            if (!checked(st)) continue;
            String why = refusal(st, registers);
            if (why != null) return "stage '" + st.name() + "': " + why;
        }
        return null;
    }

    private static boolean checked(Stage st) {
        return st.tensorized() != null
                && st.computeAt() != ComputeAtKind.INLINED
                && !AmxTensorIntrinsics.isAmx(st.tensorized().intrinsic());
    }

    static String refusal(Stage st, int registers) {
        int pos = st.indexOfUid(st.tensorized().iterUid());
        if (pos <= 0) return null;
        List<Iter> iters = st.iters();
        int lastReduce = -1;
        for (int i = 0; i < pos; i++) if (iters.get(i).kind() == IterKind.REDUCE) lastReduce = i;
        if (lastReduce == pos - 1) return null;
        long accumulators = 1;
        for (int i = lastReduce + 1; i < pos; i++) {
            if (!iters.get(i).hasExtent()) return null;
            accumulators *= iters.get(i).extent();
        }
        long vectors = iters.get(pos - 1).extent();
        if (accumulators + vectors + 1 <= registers) return null;
        return "its tensorized tile keeps " + accumulators + " accumulator vectors and loads " + vectors
                + " operand vectors per step, more than the " + registers + " vector registers hold";
    }
}
