package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The default measurer of a target: the first {@link MeasurerProvider} on the class path that
 * supports it, else {@link ProcessMeasurer} (a child JVM running the target's backend).
 */
public final class MeasurerProviders {
    private MeasurerProviders() {}

    /** The providers on the class path, in service-loader order. */
    public static List<MeasurerProvider> available() {
        List<MeasurerProvider> out = new ArrayList<>();
        for (MeasurerProvider p : ServiceLoader.load(MeasurerProvider.class)) out.add(p);
        return out;
    }

    /**
     * Starts the default measurer for {@code target}. A GPU target needs its module's provider
     * (kiln-cuda for CUDA); without it this throws, naming the target, rather than measuring elsewhere.
     */
    public static Measurer start(Target target, MeasureOptions options) {
        List<MeasurerProvider> all = available();
        for (MeasurerProvider p : all) if (p.supports(target)) return p.start(target, options);
        if (target.kind().isGpu()) {
            throw new KilnException("no measurer for target '" + target + "' on the class path (add kiln-"
                    + target.kind().tag() + "); providers found: "
                    + all.stream().map(p -> p.getClass().getName()).toList());
        }
        return ProcessMeasurer.start(target, options);
    }
}
