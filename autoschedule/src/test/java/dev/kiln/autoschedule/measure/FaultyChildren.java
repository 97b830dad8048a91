package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.FaultyBackend.Fault;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The fixture of the tests that measure faulty programs in a child JVM ({@link ProcessMeasurerFaultsTest},
 * {@link ParallelBuildTest}): quick options (2 repeats, no minimum time, no warm-up, a short time-out), child
 * measurers on {@link FaultyBackend} that share one {@link Fixtures.EditingLowerer}, and matmul workloads whose
 * schedules carry a fault on request. {@link #close} stops every child it started and deletes its temporary
 * directory (with the crash logs).
 */
final class FaultyChildren implements AutoCloseable {
    private final MeasureOptions options;
    private final Fixtures.EditingLowerer lowerer = new Fixtures.EditingLowerer();
    private final List<ProcessMeasurer> started = new ArrayList<>();

    /** A fixture whose children give a program {@code timeoutSeconds} before killing it. */
    FaultyChildren(double timeoutSeconds) {
        options = MeasureOptions.defaults()
                .withRepeats(2)
                .withMinRepeatMs(0)
                .withWarmupMs(0)
                .withTimeoutSeconds(timeoutSeconds);
    }

    /** The options every child is started with. */
    MeasureOptions options() {
        return options;
    }

    /** A child measurer on {@link FaultyBackend#TARGET} with the shared lowerer, compiling on {@code threads}. */
    ProcessMeasurer start(int buildThreads) {
        ProcessMeasurer m = ProcessMeasurer.builder(FaultyBackend.TARGET)
                .options(options)
                .lowerer(lowerer)
                .buildThreads(buildThreads)
                .start();
        started.add(m);
        return m;
    }

    /** The matmul {@code [n, k] x [k, m]} as a task on {@link FaultyBackend#TARGET}. */
    Workload matmul(long n, long m, long k) {
        ComputeDAG dag = Fixtures.matmul(n, m, k);
        return new Workload(dag, Fixtures.task(dag, FaultyBackend.TARGET), lowerer);
    }

    @Override
    public void close() throws IOException {
        for (ProcessMeasurer m : started) {
            m.close();
            Fixtures.deleteTree(m.tempDir());
        }
        started.clear();
    }

    /** A workload and the schedules of it that the fault tests measure. */
    record Workload(ComputeDAG dag, SearchTask task, Fixtures.EditingLowerer lowerer) {
        /** The default schedule, whose program the lowerer gives {@code fault}. */
        Schedule fault(Fault fault) {
            return lowerer.fault(dag, fault);
        }

        /** A sound tiled, vectorized, parallel schedule ({@link Fixtures#tiled}). */
        Schedule tiled(int tileI, int tileJ) {
            return Fixtures.tiled(dag, tileI, tileJ);
        }

        /** A schedule that cannot be lowered ({@link Fixtures#illegal}). */
        Schedule illegal() {
            return Fixtures.illegal(dag);
        }
    }
}
