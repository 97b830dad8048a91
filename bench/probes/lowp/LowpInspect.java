package dev.kiln.bench.lowp;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;

/**
 * {@code kind dtype log threads}: the best schedule of a {@code ./kiln bench lowp} log (kind gemm or conv, the
 * benchmark's default shapes), its steps printed and its generated code written to /tmp/lowp.s.
 */
public final class LowpInspect {
    public static void main(String[] a) throws Exception {
        String kind = a[0], dtype = a[1];
        Path log = Path.of(a[2]);
        int threads = Integer.parseInt(a[3]);
        long[] p = kind.equals("gemm") ? new long[] {1024, 1024, 1024} : new long[] {58, 58, 64, 64, 3};
        LowpCase c = new LowpCase(kind, p, dtype);
        CpuTarget target = Target.cpu().withCores(threads).withFastMath(true);
        Schedule s = AutoSchedule.bestSchedule(c.dag(), target, log);
        System.out.println(s.steps());
        try (CompiledKernel k = AutoSchedule.build(c.dag(), target, log)) {
            java.nio.file.Files.writeString(Path.of("/tmp/lowp.s"), k.source());
        }
    }
}
