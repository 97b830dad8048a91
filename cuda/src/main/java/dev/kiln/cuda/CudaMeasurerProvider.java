package dev.kiln.cuda;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.MeasurerProvider;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;

/** Offers {@link CudaMeasurer} to the auto-scheduler for CUDA targets (registered for ServiceLoader). */
public final class CudaMeasurerProvider implements MeasurerProvider {
    @Override
    public boolean supports(Target target) {
        return target instanceof CudaTarget;
    }

    @Override
    public Measurer start(Target target, MeasureOptions options) {
        return CudaMeasurer.start(target, options);
    }
}
