package dev.kiln.autoschedule.network;
import dev.kiln.autoschedule.tune.AutoSchedule;

/**
 * One program of a task, given as steps JSON, compiled as the network builds it: the compile's phases
 * ({@code LlvmKernel.compileTimes}) and its optimised IR in /tmp/one.ll. Args: MODEL TASK STEPS (1 thread).
 */
public class CompileOne {
    public static void main(String[] a) throws Exception {
        var target = Probes.target(1);
        NetworkTask t = Probes.tasks(a[0], target).get(Integer.parseInt(a[1]));
        var sch = dev.kiln.schedule.Schedule.fromSteps(new com.fasterxml.jackson.databind.ObjectMapper().readTree(a[2]), t.task().dag());
        WeightLayouts wl = WeightLayouts.of(t, sch);
        long t0 = System.nanoTime();
        var k = AutoSchedule.compile(wl.schedule(), target, "one");
        System.out.println("compile " + (System.nanoTime() - t0) / 1e9 + " s " + ((dev.kiln.jit.LlvmKernel) k).compileTimes());
        java.nio.file.Files.writeString(java.nio.file.Path.of("/tmp/one.ll"), k.source());
    }
}
