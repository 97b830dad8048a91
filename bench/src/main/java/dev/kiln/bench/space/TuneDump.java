package dev.kiln.bench.space;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Path;

/**
 * Tunes GEMM n for a number of trials and writes the best program's steps, loop nest and
 * assembly: {@code TuneDump n trials seed log dump-dir}.
 */
public final class TuneDump {
    private TuneDump() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int trials = Integer.parseInt(args[1]);
        long seed = Long.parseLong(args[2]);
        Path log = Path.of(args[3]);
        Path dump = Path.of(args[4]);
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        System.out.println("load before: " + Timing.loadAverage());
        ComputeDAG dag = GemmStudy.gemm(n);
        TuneOptions opts = TuneOptions.builder()
                .trials(trials)
                .seed(seed)
                .logFile(log)
                .progressBar(false)
                .build();
        try (TuneResult r = AutoSchedule.tune(dag, target, opts)) {
            System.out.println(r.summary());
            double t = GemmStudy.time(r.schedule(), target, dump, "tuned");
            GemmStudy.row("tuned best, re-timed", t, dag.flopCount());
        }
        System.out.println("load after: " + Timing.loadAverage());
    }
}
