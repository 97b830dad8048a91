package dev.kiln.autoschedule.gpu;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitRule;
import dev.kiln.autoschedule.annotate.InvalidSample;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The last GPU annotation rule: refuses a sample that breaks the target's limits, so that it is
 * never measured. After bound inference, per kernel (a stage at root with everything computed
 * inside it): the threads per block (the product of its threadIdx loops' extents, taking the
 * largest where several loops bind one axis; times the warp size in a kernel with a Tensor Core
 * stage, where each program thread is a warp) at most {@link HardwareParams#maxThreadsPerBlock()};
 * every vthread extent at most {@link HardwareParams#maxVthreadExtent()}; the shared-memory tiles
 * of its {@code .shared} stages at most {@link HardwareParams#maxSharedMemoryPerBlock()} bytes.
 * The GPU passes check the lowered program again at measurement time.
 */
public record CheckGpuLimits() implements InitRule {
    public static final String NAME = "CheckGpuLimits";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        HardwareParams hw = task.hardware();
        LoopState s;
        try {
            s = InferBound.apply(state);
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
        Map<Integer, long[]> threads = new HashMap<>(); // root -> max extent per axis x, y, z
        Map<Integer, Long> shared = new HashMap<>();
        java.util.Set<Integer> warpLevel = new java.util.HashSet<>();
        for (int id = 0; id < s.stages().size(); id++) {
            Stage st = s.stage(id);
            if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
            int root = rootOf(s, id);
            long[] t = threads.computeIfAbsent(root, k -> new long[] {1, 1, 1});
            if (st.tensorized() != null
                    && dev.kiln.schedule.CudaTensorIntrinsics.ALL.contains(
                            st.tensorized().intrinsic())) {
                warpLevel.add(root);
            }
            for (Iter it : st.iters()) {
                IterAnnotation a = it.annotation();
                int axis = a == IterAnnotation.THREAD_X
                        ? 0
                        : a == IterAnnotation.THREAD_Y ? 1 : a == IterAnnotation.THREAD_Z ? 2 : -1;
                if (axis >= 0) t[axis] = Math.max(t[axis], it.extent());
                if (a == IterAnnotation.VTHREAD && hw.maxVthreadExtent() > 0 && it.extent() > hw.maxVthreadExtent()) {
                    throw new InvalidSample(
                            NAME,
                            "stage '" + st.name() + "': vthread extent " + it.extent() + " is above "
                                    + hw.maxVthreadExtent());
                }
            }
            if (st.name().endsWith(".shared")) {
                long elems = 1;
                for (int uid = 0; uid < st.numRoots(); uid++) {
                    Iter axis = st.all().get(uid);
                    // a reduction into shared memory (a Tensor Core matmul's tile) keeps no copy per step of k
                    if (axis.kind() == IterKind.SPATIAL) elems = Math.multiplyExact(elems, axis.extent());
                }
                shared.merge(
                        root,
                        Math.multiplyExact(elems, st.op().output(0).dtype().bytes()),
                        Long::sum);
            }
        }
        for (var e : threads.entrySet()) {
            long n = e.getValue()[0] * e.getValue()[1] * e.getValue()[2];
            // a kernel with Tensor Core tiles runs a warp per program thread
            if (warpLevel.contains(e.getKey())) n *= Math.max(1, hw.warpSize());
            if (hw.maxThreadsPerBlock() > 0 && n > hw.maxThreadsPerBlock()) {
                throw new InvalidSample(
                        NAME,
                        "kernel of stage '" + s.stage(e.getKey()).name() + "' has " + n + " threads per block, above "
                                + hw.maxThreadsPerBlock());
            }
        }
        for (var e : shared.entrySet()) {
            if (e.getValue() > hw.maxSharedMemoryPerBlock()) {
                throw new InvalidSample(
                        NAME,
                        "kernel of stage '" + s.stage(e.getKey()).name() + "' needs " + e.getValue()
                                + " bytes of shared memory per block, above " + hw.maxSharedMemoryPerBlock());
            }
        }
        return state;
    }

    private static int rootOf(LoopState s, int id) {
        int cur = id;
        for (int guard = 0;
                s.stage(cur).computeAt() == ComputeAtKind.ITER
                        && guard < s.stages().size();
                guard++) {
            cur = s.stage(cur).attachStage();
        }
        return cur;
    }
}
