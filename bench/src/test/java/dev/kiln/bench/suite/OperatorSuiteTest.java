package dev.kiln.bench.suite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.bench.suite.SuiteRow.Status;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The whole command on two tiny workloads, one thread, every implementation in its child JVM: the
 * TSV has a checked row per implementation and workload (OpenBLAS's conv row says it has none),
 * Kiln's rows carry the tuning split, the PNG decodes, and a rerun with {@code --trials 0}
 * builds from the log without searching (in two timing passes, whose medians its notes give).
 */
class OperatorSuiteTest {

    @Test
    void tunesTimesChecksAndPlotsTwoTinyWorkloads(@TempDir Path tmp) throws Exception {
        Path list = tmp.resolve("tiny.tsv");
        Files.writeString(
                list,
                "# two tiny workloads\nGMM\tbatch_matmul(B,N,M,K)\t1,16,16,16\nC2D\tconv2d_nhwc\t1,6,6,4,8,3,1,1\n");
        Path dir = tmp.resolve("out");
        String[] common = {
            "--workloads",
            list.toString(),
            "--dir",
            dir.toString(),
            "--log",
            dir.resolve("t.jsonl").toString(),
            "--threads",
            "1",
            "--repeats",
            "3",
            "--warmup",
            "2",
            "--warmup-seconds",
            "0",
            "--sample-ms",
            "1",
            "--per-round",
            "4"
        };
        int rc = new CommandLine(new OperatorSuite()).execute(concat(common, "--trials", "4"));
        assertThat(rc).isZero();

        List<SuiteRow> rows = rowsOf(newest(dir, ".tsv"));
        assertThat(rows).hasSize(8);
        assertThat(rows).filteredOn(r -> r.impl().equals("kiln")).hasSize(2).allSatisfy(r -> {
            assertThat(r.status()).isEqualTo(Status.OK);
            assertThat(r.trials()).isEqualTo(4);
            assertThat(r.secondsPerTrial()).isPositive();
            assertThat(r.outsideMeasure()).isBetween(0.0, 1.0);
            assertThat(r.medianMs()).isBetween(r.minMs(), r.p90Ms());
        });
        // the conv's weight is layout-free by default (packed once, outside the timing); GMM reads its inputs as given
        assertThat(rows)
                .filteredOn(r -> r.impl().equals("kiln") && r.op().equals("C2D"))
                .singleElement()
                .satisfies(r -> assertThat(r.kernel()).contains("weights layout-free (packed once, untimed"));
        assertThat(rows)
                .filteredOn(r -> r.impl().equals("kiln") && r.op().equals("GMM"))
                .singleElement()
                .satisfies(r -> assertThat(r.kernel()).doesNotContain("layout-free"));
        assertThat(rows)
                .filteredOn(r -> r.impl().equals("openblas") && r.op().equals("C2D"))
                .singleElement()
                .satisfies(r -> assertThat(r.status()).isEqualTo(Status.UNSUPPORTED));
        assertThat(rows).filteredOn(r -> r.impl().equals("onednn")).allSatisfy(r -> {
            assertThat(r.status()).isEqualTo(Status.OK);
            assertThat(r.kernel()).isNotBlank().isNotEqualTo("-"); // impl_info_str
        });
        assertThat(rows).filteredOn(r -> r.status() == Status.OK).allSatisfy(r -> assertThat(r.relToBest())
                .isBetween(0.0, 1.0));
        BufferedImage png = ImageIO.read(newest(dir, "-1t.png").toFile());
        assertThat(png).isNotNull();
        assertThat(png.getWidth()).isEqualTo(1400);
        BufferedImage curve = ImageIO.read(
                dir.resolve("curves").resolve("gmm-1-16-16-16-1t.png").toFile());
        assertThat(curve).isNotNull(); // the tuning curve written next to the log
        assertThat(curve.getWidth()).isEqualTo(dev.kiln.bench.plot.CurveChart.WIDTH);

        Thread.sleep(1100); // the next run's files get a new time stamp
        rc = new CommandLine(new OperatorSuite())
                .execute(concat(common, "--trials", "0", "--impls", "kiln", "--passes", "2"));
        assertThat(rc).isZero();
        assertThat(rowsOf(newest(dir, ".tsv"))).hasSize(2).allSatisfy(r -> {
            assertThat(r.kernel()).startsWith("built from the log (no search)");
            assertThat(r.status()).isEqualTo(Status.OK);
            assertThat(r.notes()).containsPattern("2 passes, medians [0-9.e-]+, [0-9.e-]+ ms: pass [12] kept");
        });

        // --no-layout-free looks the conv up under its plain key, which this log does not have; GMM is unchanged
        Thread.sleep(1100);
        rc = new CommandLine(new OperatorSuite())
                .execute(concat(common, "--trials", "0", "--impls", "kiln", "--no-layout-free"));
        assertThat(rc).isZero();
        assertThat(rowsOf(newest(dir, ".tsv"))).hasSize(2).allSatisfy(r -> assertThat(r.kernel())
                .startsWith(r.op().equals("C2D") ? "UNTUNED default lowering" : "built from the log (no search)"));

        // the log was tuned with FMA contraction (the default): without it the target differs, so nothing matches
        Thread.sleep(1100);
        rc = new CommandLine(new OperatorSuite())
                .execute(concat(common, "--trials", "0", "--impls", "kiln", "--no-fma"));
        assertThat(rc).isZero();
        assertThat(rowsOf(newest(dir, ".tsv"))).hasSize(2).allSatisfy(r -> {
            assertThat(r.kernel()).startsWith("UNTUNED default lowering");
            assertThat(r.notes()).contains("needs --fma").doesNotContain("-fast-math=1'");
        });
    }

    private static List<SuiteRow> rowsOf(Path tsv) throws Exception {
        return SuiteRow.parseAll(Files.readAllLines(tsv), tsv.toString());
    }

    private static Path newest(Path dir, String suffix) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("suite-")
                            && p.getFileName().toString().endsWith(suffix))
                    .max(Path::compareTo)
                    .orElseThrow();
        }
    }

    private static String[] concat(String[] a, String... b) {
        return Stream.concat(Stream.of(a), Stream.of(b)).toArray(String[]::new);
    }
}
