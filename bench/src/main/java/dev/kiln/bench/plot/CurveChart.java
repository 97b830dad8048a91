package dev.kiln.bench.plot;

import dev.kiln.ir.KilnException;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Tuning curves as one PNG (JFreeChart): on the left the best rate against trials, on the right
 * against wall time, one step line per curve, each curve's baselines as dashed horizontal lines
 * labelled with their names. A curve with no valid program yet is named in the subtitle rather
 * than left out silently.
 */
public final class CurveChart {
    /** The size of the PNG {@link #write} draws. */
    public static final int WIDTH = 1400, HEIGHT = 560;

    private CurveChart() {}

    /** Best rate against trials. */
    public static JFreeChart byTrials(List<TuningCurve> curves, String title) {
        return chart(curves, title + ": best against trials", "trials", p -> p.trial());
    }

    /** Best rate against wall time in seconds. */
    public static JFreeChart byTime(List<TuningCurve> curves, String title) {
        return chart(curves, title + ": best against wall time", "wall time (s)", TuningCurve.Point::elapsedSeconds);
    }

    /** Both charts side by side in one PNG of {@link #WIDTH} x {@link #HEIGHT}. */
    public static void write(Path png, List<TuningCurve> curves, String title) throws IOException {
        if (curves.isEmpty()) throw new KilnException("tuning curve " + png + ": no curve to draw");
        BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            byTrials(curves, title).draw(g, new Rectangle2D.Double(0, 0, WIDTH / 2.0, HEIGHT));
            byTime(curves, title).draw(g, new Rectangle2D.Double(WIDTH / 2.0, 0, WIDTH / 2.0, HEIGHT));
        } finally {
            g.dispose();
        }
        if (png.toAbsolutePath().getParent() != null)
            Files.createDirectories(png.toAbsolutePath().getParent());
        ImageIO.write(img, "png", png.toFile());
    }

    private static JFreeChart chart(
            List<TuningCurve> curves, String title, String xLabel, ToDoubleFunction<TuningCurve.Point> x) {
        XYSeriesCollection data = new XYSeriesCollection();
        StringBuilder empty = new StringBuilder();
        for (TuningCurve c : curves) {
            if (c.points().isEmpty()) {
                empty.append(empty.isEmpty() ? "no valid program yet: " : ", ").append(c.name());
                continue;
            }
            XYSeries s = new XYSeries(c.name(), false, true);
            for (TuningCurve.Point p : c.points()) s.add(x.applyAsDouble(p), p.bestRate());
            data.addSeries(s);
        }
        String unit = String.join(
                " / ", curves.stream().map(TuningCurve::unit).distinct().toList());
        JFreeChart chart = ChartFactory.createXYLineChart(
                title, xLabel, "best " + unit, data, PlotOrientation.VERTICAL, true, false, false);
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        if (!empty.isEmpty()) {
            chart.addSubtitle(
                    new org.jfree.chart.title.TextTitle(empty.toString(), new Font(Font.SANS_SERIF, Font.PLAIN, 11)));
        }
        XYPlot plot = chart.getXYPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        XYStepRenderer r = new XYStepRenderer();
        r.setDefaultStroke(new BasicStroke(2f));
        r.setAutoPopulateSeriesStroke(false);
        plot.setRenderer(r);
        for (int i = 0; i < data.getSeriesCount(); i++) { // a curve of one or two points is a dot, not a line
            r.setSeriesShapesVisible(i, data.getItemCount(i) <= 2);
        }
        ((NumberAxis) plot.getDomainAxis()).setAutoRangeIncludesZero(true);
        double top = 0;
        for (TuningCurve c : curves) {
            for (Map.Entry<String, Double> b : c.baselines().entrySet()) {
                if (b.getValue() == null || !(b.getValue() > 0)) continue;
                top = Math.max(top, b.getValue());
                ValueMarker m = new ValueMarker(b.getValue());
                m.setPaint(Color.DARK_GRAY);
                m.setStroke(new BasicStroke(
                        1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
                m.setLabel((curves.size() > 1 ? c.name() + ": " : "") + b.getKey());
                m.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                m.setLabelAnchor(RectangleAnchor.TOP_LEFT);
                m.setLabelTextAnchor(TextAnchor.BOTTOM_LEFT);
                plot.addRangeMarker(m);
            }
        }
        double maxRate = curves.stream()
                .flatMap(c -> c.points().stream())
                .mapToDouble(TuningCurve.Point::bestRate)
                .max()
                .orElse(0);
        double upper = Math.max(top, maxRate) * 1.1;
        if (upper > 0) plot.getRangeAxis().setRange(0, upper);
        return chart;
    }
}
