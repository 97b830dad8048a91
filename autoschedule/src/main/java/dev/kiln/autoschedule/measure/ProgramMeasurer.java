package dev.kiln.autoschedule.measure;

import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.util.List;

/**
 * A measurer that also measures programs lowered elsewhere: the measuring child JVM ({@link MeasureWorker}) hands a
 * program it was sent (by a cluster worker, {@link RemoteMeasurement.Executor}) to the {@link MeasurerProvider}'s
 * measurer of the program's target when that measurer is a {@code ProgramMeasurer} (the CUDA measurer: kernels timed
 * with device events, not through the host calls of a {@link dev.kiln.target.Backend}), and measures it through the
 * target's backend otherwise.
 */
public interface ProgramMeasurer extends Measurer {
    /**
     * Measures {@code func} on {@code args} (its parameters, in order: {@code inputs} inputs holding the seeded
     * values, then the outputs), checking the outputs against {@code references} (in output order; empty: no
     * check). The arrays stay the caller's.
     */
    MeasureResult measureProgram(PrimFunc func, NDArray[] args, int inputs, List<NDArray> references);
}
