package dev.kiln.bench.network;

import dev.kiln.autoschedule.model.PretrainedModel;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.ir.KilnException;
import java.nio.file.Path;

/**
 * The pretrained cost model a benchmark's {@code --pretrained} option names: a file written by {@code ./kiln
 * pretrain}, {@code bundled} (the one shipped with Kiln) or {@code none} (the learned model alone, starting random).
 */
public final class PretrainedModels {
    private PretrainedModels() {}

    /** --pretrained on network tuning: a file, 'bundled' or null (the default start), or 'none'. */
    public static void apply(NetworkTuneOptions.Builder b, String name) {
        if (name == null || name.equals("bundled")) return; // the default search starts from the shipped model
        if (name.equals("none")) b.withoutPretraining();
        else b.pretrained(named(name));
    }

    /** The pretrained model named by --pretrained: a file, or the one shipped with Kiln. */
    public static PretrainedModel named(String name) {
        return name.equals("bundled")
                ? PretrainedModel.bundled()
                        .orElseThrow(() -> new KilnException("--pretrained bundled: this build of Kiln ships no "
                                + "pretrained model (train one with ./kiln pretrain)"))
                : PretrainedModel.load(Path.of(name));
    }
}
