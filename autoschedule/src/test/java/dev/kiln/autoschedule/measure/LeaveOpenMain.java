package dev.kiln.autoschedule.measure;

import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;

/**
 * A tuner that never closes its measurer, for {@link WorkerLifetimeTest}: it measures one program
 * (so a child runs) and prints the child's pid and the measurer's directory; then it exits
 * normally (argument {@code exit}), or measures a program that hangs (argument {@code hang}), so
 * that the child is busy when the test kills this process.
 */
public final class LeaveOpenMain {
    private LeaveOpenMain() {}

    public static void main(String[] args) {
        ComputeDAG dag = Fixtures.matmul(3, 3, 3);
        Fixtures.EditingLowerer lowerer = new Fixtures.EditingLowerer();
        ProcessMeasurer m = ProcessMeasurer.builder(FaultyBackend.TARGET)
                .lowerer(lowerer)
                .options(MeasureOptions.defaults().withMinRepeatMs(0).withTimeoutSeconds(300))
                .start();
        if (!m.measure(Fixtures.task(dag, FaultyBackend.TARGET), Schedule.empty(dag))
                .ok()) System.exit(5);
        System.out.println("CHILD " + m.workerPid().orElseThrow() + " DIR " + m.tempDir());
        System.out.flush();
        if (args[0].equals("exit")) System.exit(0);
        m.measure(Fixtures.task(dag, FaultyBackend.TARGET), lowerer.fault(dag, FaultyBackend.Fault.HANG_AT_RUN));
        System.exit(6);
    }
}
