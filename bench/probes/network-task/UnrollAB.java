package dev.kiln.autoschedule.network;

/**
 * Each task's best program of a log compiled twice, LLVM allowed to unroll every loop nest (the old code) and
 * only nests of at most STEPS steps (StmtGen.llvmUnrollSteps), then timed warm in alternating rounds ({@link
 * PropertyAB#compare}): compile times and the kernels' medians, and their ratio. Args: MODEL LOG THREADS STEPS (the
 * new limit).
 */
public class UnrollAB {
    public static void main(String[] a) throws Exception {
        var flag = Class.forName("dev.kiln.jit.StmtGen").getDeclaredField("llvmUnrollSteps");
        flag.setAccessible(true);
        PropertyAB.compare(a[0], a[1], Integer.parseInt(a[2]), v -> {
            try {
                flag.setLong(null, v == 0 ? Long.MAX_VALUE : Long.parseLong(a[3]));
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
