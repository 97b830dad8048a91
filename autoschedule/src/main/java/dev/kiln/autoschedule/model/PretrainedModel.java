package dev.kiln.autoschedule.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * A cost model pretrained on programs Kiln measured on other tasks ({@link PretrainingSet}, as
 * TenSet pretrains on its dataset): trees that rank the programs of a task they have never seen,
 * and the calibration pooled over their training tasks that maps their scores to normalised
 * throughputs. {@link GbdtCostModel#withPretrained} starts every new task with it instead of
 * random scores, and then keeps boosting on top of it with the task's own measurements.
 *
 * <p>Saved as JSON (gzipped when the file name ends in {@code .gz}): format, description, the
 * trees' node arrays, the calibration's knots, and what it was trained on. Kiln ships one
 * ({@link #bundled}) trained on its own tuning records; {@code ./kiln pretrain} makes others.
 */
public final class PretrainedModel {
    /** The format this Kiln reads and writes. */
    public static final String FORMAT = "kiln-pretrained-1";
    /** Where the shipped model lives on the class path. */
    static final String RESOURCE = "pretrained-cpu.json.gz";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Gbdt trees;
    private final Calibration calibration;
    private final String description;
    private final int programs;
    private final List<String> tasks;

    private PretrainedModel(Gbdt trees, Calibration calibration, String description, int programs, List<String> tasks) {
        this.trees = trees;
        this.calibration = calibration;
        this.description = description;
        this.programs = programs;
        this.tasks = List.copyOf(tasks);
    }

    /**
     * Trees trained with {@code params} on every program of {@code set} (Kiln's pairwise ranking loss is the default).
     */
    public static PretrainedModel train(PretrainingSet set, GbdtParams params, String description) {
        return train(set, params, description, null);
    }

    /**
     * Trees trained on {@code set} on top of {@code base}'s (continued boosting: the new trees fit what the base
     * gets wrong on these programs; null for none), for records of tasks the base was not trained on when its own
     * records are not at hand. The calibration is fitted on {@code set}'s programs; the training tasks are both
     * models'.
     */
    public static PretrainedModel train(
            PretrainingSet set, GbdtParams params, String description, PretrainedModel base) {
        Gbdt.TrainingSet d = set.trainingSet(FeatureLayout.LENGTH, 1.0);
        Gbdt g = Gbdt.train(d, params, base == null ? null : base.trees);
        double[] raw = new double[d.programs()];
        for (int q = 0; q < raw.length; q++)
            raw[q] = g.predictProgram(d.x(), d.start()[q], d.start()[q + 1] - d.start()[q], d.width());
        Calibration c = Calibration.fit(raw, d.label());
        Stream<String> own = set.perTask().keySet().stream().map(k -> k.substring(0, k.indexOf('\n')));
        List<String> tasks = Stream.concat(base == null ? Stream.empty() : base.tasks.stream(), own)
                .distinct()
                .sorted()
                .toList();
        int programs = d.programs() + (base == null ? 0 : base.programs);
        return new PretrainedModel(g, c, description, programs, tasks);
    }

    /** The trees (to continue boosting from). */
    Gbdt trees() {
        return trees;
    }

    /** What the model was trained on, in words. */
    public String description() {
        return description;
    }

    /** How many measured programs it was trained on. */
    public int programs() {
        return programs;
    }

    /** The workload keys of its training tasks. */
    public List<String> tasks() {
        return tasks;
    }

    /** The raw (uncalibrated) score of a program. */
    double raw(ProgramFeatures f) {
        return trees.predictProgram(f.values(), 0, f.rows(), FeatureLayout.LENGTH);
    }

    /** The score of a program as a normalised throughput (its raw score through the pooled calibration). */
    public double score(ProgramFeatures f) {
        return f.isEmpty() ? Double.NEGATIVE_INFINITY : calibration.apply(raw(f));
    }

    /** The JSON form. */
    record Saved(
            String format,
            String description,
            int programs,
            List<String> tasks,
            Gbdt.Nodes trees,
            double[] knotScores,
            double[] knotLabels) {}

    /** Writes the model to {@code file} (gzipped if its name ends in {@code .gz}). */
    public void save(Path file) {
        Saved s = new Saved(
                FORMAT,
                description,
                programs,
                tasks,
                trees.saved(),
                calibration.knotScores(),
                calibration.knotLabels());
        try {
            if (file.toAbsolutePath().getParent() != null)
                Files.createDirectories(file.toAbsolutePath().getParent());
            try (OutputStream out = gzipIfNamed(file, Files.newOutputStream(file))) {
                JSON.writeValue(out, s);
            }
        } catch (IOException e) {
            throw new KilnException("cannot write the pretrained model " + file + ": " + e.getMessage());
        }
    }

    /** Reads a model written by {@link #save}; a file of another format or a broken model throws naming the file. */
    public static PretrainedModel load(Path file) {
        if (!Files.isRegularFile(file)) throw new KilnException("pretrained model " + file + " does not exist");
        try (InputStream in = file.toString().endsWith(".gz")
                ? new GZIPInputStream(Files.newInputStream(file))
                : Files.newInputStream(file)) {
            return read(in, file.toString());
        } catch (IOException e) {
            throw new KilnException("cannot read the pretrained model " + file + ": " + e.getMessage());
        }
    }

    /** {@link #bundled()}, read once per process (the default CPU search starts every task from it). */
    public static Optional<PretrainedModel> shipped() {
        return Shipped.MODEL;
    }

    private static final class Shipped {
        static final Optional<PretrainedModel> MODEL = bundled();
    }

    /** The model shipped with Kiln, if this build has one (it is trained by {@code ./kiln pretrain}). */
    public static Optional<PretrainedModel> bundled() {
        try (InputStream raw = PretrainedModel.class.getResourceAsStream(RESOURCE)) {
            if (raw == null) return Optional.empty();
            try (InputStream in = new GZIPInputStream(raw)) {
                return Optional.of(read(in, "the bundled " + RESOURCE));
            }
        } catch (IOException e) {
            throw new KilnException("cannot read the bundled pretrained model " + RESOURCE + ": " + e.getMessage());
        }
    }

    private static PretrainedModel read(InputStream in, String source) throws IOException {
        Saved s;
        try {
            s = JSON.readValue(in, Saved.class);
        } catch (JsonProcessingException e) {
            throw new KilnException(
                    "pretrained model " + source + " is not valid JSON of " + FORMAT + ": " + e.getOriginalMessage());
        }
        if (!FORMAT.equals(s.format())) {
            throw new KilnException(
                    "pretrained model " + source + " has format '" + s.format() + "', this Kiln reads " + FORMAT);
        }
        if (s.trees() == null
                || s.trees().width() != FeatureLayout.LENGTH
                        && s.trees().width() != FeatureLayout.LENGTH_BEFORE_TENSORIZE) {
            throw new KilnException("pretrained model " + source + " reads "
                    + (s.trees() == null ? 0 : s.trees().width()) + " features per statement, this Kiln extracts "
                    + FeatureLayout.LENGTH + "; retrain it with ./kiln pretrain");
        }
        try {
            return new PretrainedModel(
                    Gbdt.of(s.trees()),
                    Calibration.of(s.knotScores(), s.knotLabels()),
                    s.description(),
                    s.programs(),
                    s.tasks() == null ? List.of() : s.tasks());
        } catch (KilnException e) {
            throw new KilnException("pretrained model " + source + " is broken: " + e.getMessage());
        }
    }

    private static OutputStream gzipIfNamed(Path file, OutputStream out) throws IOException {
        return file.toString().endsWith(".gz") ? new GZIPOutputStream(out) : out;
    }

    @Override
    public String toString() {
        return "pretrained model (" + description + "; " + programs + " programs of " + tasks.size() + " tasks, "
                + trees.trees() + " trees)";
    }
}
