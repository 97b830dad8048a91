package dev.kiln.bench.suite;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The suite's figure, drawn with JFreeChart as the Ansor paper's operator figure: one bar group
 * per operator, one bar per implementation, the height the geometric mean over the operator's
 * shapes of its speed relative to the best implementation of each shape (1 = the best). What did
 * not run (an operator a library lacks, a failure) is listed under the chart, never left as a
 * silent gap.
 */
final class SuiteChart {
    private SuiteChart() {}

    static void write(Path png, List<SuiteRow> rows, int threads, List<String> impls, String subtitle)
            throws IOException {
        Map<String, Map<String, Double>> byOp = SuiteReport.byOperator(rows, threads, impls);
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (var op : byOp.entrySet()) {
            for (String impl : impls) {
                Double v = op.getValue().get(impl);
                data.addValue(v == null || v.isNaN() ? null : v, impl, op.getKey());
            }
        }
        JFreeChart chart = ChartFactory.createBarChart(
                "Kiln operator suite, " + threads + " thread(s)",
                "operator",
                "throughput relative to the best (geometric mean over shapes)",
                data,
                PlotOrientation.VERTICAL,
                true,
                false,
                false);
        chart.setBackgroundPaint(Color.WHITE);
        chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 11)));
        List<String> absent = SuiteReport.absent(rows, threads);
        if (!absent.isEmpty()) {
            TextTitle missing =
                    new TextTitle("not run: " + String.join("; ", absent), new Font(Font.SANS_SERIF, Font.PLAIN, 10));
            missing.setPosition(org.jfree.chart.ui.RectangleEdge.BOTTOM);
            chart.addSubtitle(missing);
        }
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.GRAY);
        plot.getRangeAxis().setRange(0, 1.05);
        plot.getDomainAxis().setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        BarRenderer r = (BarRenderer) plot.getRenderer();
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        r.setItemMargin(0.02);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1400, 700);
    }
}
