package dev.kiln.autoschedule.measure;

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

    /** Starts the default measurer for {@code target}. */
    public static Measurer start(Target target, MeasureOptions options) {
        for (MeasurerProvider p : available()) if (p.supports(target)) return p.start(target, options);
        return ProcessMeasurer.start(target, options);
    }
}
