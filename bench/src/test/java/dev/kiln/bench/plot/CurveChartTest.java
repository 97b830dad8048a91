package dev.kiln.bench.plot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.autoschedule.log.LogRecord;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.data.xy.XYDataset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tuning curve from a synthetic log: the PNG decodes at its stated size, and the plotted series
 * are the best-so-far rates (monotone, ending at the plain best over valid trials), with trials
 * counted without re-measurements and wall time never going back.
 */
class CurveChartTest {
    static final double OPS = 2.0 * 64 * 64 * 64;

    @Test
    void plotsTheBestSoFarOfASyntheticLog(@TempDir Path tmp) throws Exception {
        List<LogRecord> recs = SyntheticLog.records("kiln-test", "cpu -cores=1", 40, 3);
        TuningCurve c = TuningCurve.fromLog("GMM test", recs, OPS, "GFLOP/s").withBaselines(Map.of("ref", 5.0));

        double bestSeconds = recs.stream()
                .filter(r -> !r.isRemeasure())
                .mapToDouble(LogRecord::seconds)
                .min()
                .orElseThrow();
        long trials = recs.stream().filter(r -> !r.isRemeasure()).count();
        assertThat(trials).isEqualTo(40);
        assertThat(c.points().getLast().trial()).isEqualTo(40);
        assertThat(c.points().getLast().bestRate()).isCloseTo(OPS / bestSeconds / 1e9, within(1e-9));

        Path png = tmp.resolve("curve.png");
        CurveChart.write(png, List.of(c), "test");
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img).isNotNull();
        assertThat(img.getWidth()).isEqualTo(CurveChart.WIDTH);
        assertThat(img.getHeight()).isEqualTo(CurveChart.HEIGHT);

        for (JFreeChart chart : List.of(CurveChart.byTrials(List.of(c), "t"), CurveChart.byTime(List.of(c), "t"))) {
            XYDataset d = chart.getXYPlot().getDataset();
            assertThat(d.getSeriesCount()).isEqualTo(1);
            int n = d.getItemCount(0);
            assertThat(n).isEqualTo(c.points().size());
            for (int i = 1; i < n; i++) {
                assertThat(d.getYValue(0, i)).isGreaterThanOrEqualTo(d.getYValue(0, i - 1));
                assertThat(d.getXValue(0, i)).isGreaterThanOrEqualTo(d.getXValue(0, i - 1));
            }
            assertThat(d.getYValue(0, n - 1)).isCloseTo(OPS / bestSeconds / 1e9, within(1e-9));
            assertThat(chart.getXYPlot().getRangeMarkers(org.jfree.chart.ui.Layer.FOREGROUND))
                    .hasSize(1);
        }
    }

    @Test
    void aLogWithoutAValidProgramHasNoPointsAndIsNamed(@TempDir Path tmp) throws Exception {
        List<LogRecord> failed = SyntheticLog.records("kiln-test", "cpu", 10, 1).stream()
                .filter(r -> !r.isValid())
                .toList();
        TuningCurve c = TuningCurve.fromLog("broken", failed, OPS, "GOP/s");
        assertThat(c.points()).isEmpty();
        JFreeChart chart = CurveChart.byTrials(List.of(c), "t");
        assertThat(chart.getSubtitleCount()).isGreaterThan(1); // the legend and the "no valid program" line
        CurveChart.write(tmp.resolve("x.png"), List.of(c), "t");
        assertThat(ImageIO.read(tmp.resolve("x.png").toFile())).isNotNull();
    }
}
