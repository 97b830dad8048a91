package dev.kiln.autoschedule.measure;

import dev.kiln.target.Target;

/**
 * A measurer for some targets, offered by a backend module through {@link java.util.ServiceLoader}
 * ({@code META-INF/services/dev.kiln.autoschedule.measure.MeasurerProvider}): the CUDA module
 * offers its GPU measurer, which times kernels with device events, for CUDA targets. The
 * auto-scheduler uses the first provider that supports a target ({@link MeasurerProviders}).
 */
public interface MeasurerProvider {

    /** Whether this provider measures programs for {@code target}. */
    boolean supports(Target target);

    /**
     * Starts a measurer for {@code target}; throws {@link dev.kiln.ir.KilnException} when it cannot (no device, say).
     */
    Measurer start(Target target, MeasureOptions options);
}
