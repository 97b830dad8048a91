package dev.kiln.bench.plot;

import dev.kiln.ir.KilnException;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.labels.XYItemLabelGenerator;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * A roofline plot (JFreeChart, log-log): arithmetic intensity (operations per byte) against
 * measured rate, one labelled dot per tuned kernel, under the roof min(peak, intensity x
 * bandwidth) of {@link MachinePeaks}.
 */
public final class RooflineChart {
    /** The size of the PNG {@link #write} draws. */
    public static final int WIDTH = 1100, HEIGHT = 750;

    private RooflineChart() {}

    /** The chart; series 0 is the roof, series 1 the kernels. */
    public static JFreeChart chart(List<RooflinePoint> points, MachinePeaks peaks, String unit, String title) {
        if (points.isEmpty()) throw new KilnException("roofline: no kernel to draw");
        double lo = Math.min(
                peaks.ridge(),
                points.stream().mapToDouble(RooflinePoint::intensity).min().orElseThrow());
        double hi = Math.max(
                peaks.ridge(),
                points.stream().mapToDouble(RooflinePoint::intensity).max().orElseThrow());
        lo /= 4;
        hi *= 4;
        XYSeries roof = new XYSeries(
                String.format(Locale.ROOT, "roof: %.0f %s peak, %.1f GB/s", peaks.gflops(), unit, peaks.gbPerSecond()),
                false);
        roof.add(lo, peaks.roof(lo));
        if (peaks.ridge() > lo && peaks.ridge() < hi) roof.add(peaks.ridge(), peaks.gflops());
        roof.add(hi, peaks.roof(hi));
        XYSeries kernels = new XYSeries("tuned kernels", false);
        for (RooflinePoint p : points) kernels.add(p.intensity(), p.rate());
        XYSeriesCollection data = new XYSeriesCollection();
        data.addSeries(roof);
        data.addSeries(kernels);

        LogAxis x = new LogAxis("arithmetic intensity (operations per byte)");
        LogAxis y = new LogAxis(unit);
        for (LogAxis a : List.of(x, y)) {
            a.setSmallestValue(1e-4);
            a.setAutoTickUnitSelection(false);
            a.setTickUnit(new NumberTickUnit(1)); // one tick per power of ten
            a.setNumberFormatOverride(new DecimalFormat("0.####"));
            a.setMinorTickCount(9);
            a.setMinorTickMarksVisible(true);
        }
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer();
        r.setSeriesLinesVisible(0, true);
        r.setSeriesShapesVisible(0, false);
        r.setSeriesPaint(0, Color.DARK_GRAY);
        r.setSeriesStroke(0, new BasicStroke(2.5f));
        r.setSeriesLinesVisible(1, false);
        r.setSeriesShapesVisible(1, true);
        r.setSeriesShape(1, new Ellipse2D.Double(-4, -4, 8, 8));
        r.setSeriesPaint(1, new Color(0xC0392B));
        XYItemLabelGenerator names =
                (ds, series, item) -> series == 1 ? points.get(item).name() : null;
        r.setSeriesItemLabelGenerator(1, names);
        r.setSeriesItemLabelsVisible(1, true);
        r.setSeriesItemLabelFont(1, new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        XYPlot plot = new XYPlot(data, x, y, r);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        double top = Math.max(
                peaks.gflops(),
                points.stream().mapToDouble(RooflinePoint::rate).max().orElseThrow());
        double bottom = Math.min(
                peaks.roof(lo),
                points.stream().mapToDouble(RooflinePoint::rate).min().orElseThrow());
        y.setRange(bottom / 2, top * 2);
        x.setRange(lo, hi);
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 15), plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        chart.addSubtitle(new TextTitle(peaks.how(), new Font(Font.SANS_SERIF, Font.PLAIN, 11)));
        return chart;
    }

    /** The chart as a PNG of {@link #WIDTH} x {@link #HEIGHT}. */
    public static void write(Path png, List<RooflinePoint> points, MachinePeaks peaks, String unit, String title)
            throws IOException {
        if (png.toAbsolutePath().getParent() != null)
            Files.createDirectories(png.toAbsolutePath().getParent());
        ChartUtils.saveChartAsPNG(png.toFile(), chart(points, peaks, unit, title), WIDTH, HEIGHT);
    }
}
