package dev.kiln.bench.network;

import dev.kiln.graph.Graph;
import dev.kiln.ir.KilnException;
import dev.kiln.models.Models;
import java.util.Locale;

/**
 * The whole networks the benchmarks and the command line name ({@code --network}): resnet50, mobilenetv2, bert (one
 * encoder layer) and resnet18-small, each built by {@link Models} with seeded random weights.
 */
public final class BenchNetworks {
    private BenchNetworks() {}

    /** The networks by name. */
    public static Graph graphOf(String name, long seed) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "resnet50" -> Models.resnet50(1, 224, seed);
            case "mobilenetv2" -> Models.mobilenetV2(1, 224, seed);
            case "bert" -> Models.bertLayer(128, 768, 12, 3072, seed);
            case "resnet18-small" -> Models.resnet18(1, 64, 8, 10, seed);
            default ->
                throw new KilnException(
                        "--network: unknown network '" + name + "' (resnet50, mobilenetv2, bert, resnet18-small)");
        };
    }
}
