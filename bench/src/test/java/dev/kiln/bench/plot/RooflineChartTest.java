package dev.kiln.bench.plot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Linalg;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.jfree.data.xy.XYDataset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The roofline: intensity is operations over argument bytes, the roof is min(peak, intensity x
 * bandwidth) at every plotted point, the kernels sit where they were put, the PNG decodes; the
 * peak probes give positive numbers on a small run (and the triad checks its own output).
 */
class RooflineChartTest {

    @Test
    void intensityIsOperationsOverArgumentBytes() {
        ComputeDAG mm = ComputeDAG.of(Linalg.matmul(
                Te.placeholder("A", DType.FLOAT32, 32, 64),
                Te.placeholder("B", DType.FLOAT32, 64, 16),
                false,
                false,
                DType.FLOAT32));
        double bytes = 4.0 * (32 * 64 + 64 * 16 + 32 * 16);
        assertThat(RooflinePoint.intensity(mm)).isCloseTo(mm.flopCount() / bytes, within(1e-12));
        assertThat(mm.flopCount()).isEqualTo(2L * 32 * 64 * 16);
    }

    @Test
    void drawsKernelsUnderTheRoof(@TempDir Path tmp) throws Exception {
        MachinePeaks peaks = MachinePeaks.given(200, 20);
        List<RooflinePoint> pts = List.of(
                new RooflinePoint("low", 0.25, 3), new RooflinePoint("mid", 4, 50), new RooflinePoint("high", 40, 150));
        var chart = RooflineChart.chart(pts, peaks, "GFLOP/s", "t");
        XYDataset d = chart.getXYPlot().getDataset();
        for (int i = 0; i < d.getItemCount(0); i++) {
            assertThat(d.getYValue(0, i))
                    .isCloseTo(Math.min(200, 20 * d.getXValue(0, i)), within(1e-9 * d.getYValue(0, i)));
        }
        assertThat(d.getItemCount(1)).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            assertThat(d.getXValue(1, i)).isEqualTo(pts.get(i).intensity());
            assertThat(d.getYValue(1, i)).isEqualTo(pts.get(i).rate());
        }
        Path png = tmp.resolve("roof.png");
        RooflineChart.write(png, pts, peaks, "GFLOP/s", "t");
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isEqualTo(RooflineChart.WIDTH);
        assertThat(img.getHeight()).isEqualTo(RooflineChart.HEIGHT);
        assertThat(peaks.ridge()).isEqualTo(10.0);
    }

    @Test
    void badPointsAndPeaksAreRefused() {
        assertThatThrownBy(() -> new RooflinePoint("k", 0, 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("k");
        assertThatThrownBy(() -> MachinePeaks.given(-1, 2)).isInstanceOf(KilnException.class);
    }

    @Test
    void probesMeasurePositivePeaksOnASmallRun() {
        double fma = MachinePeaks.fmaPeak(Target.cpu().withCores(1), 0.05);
        assertThat(fma).isPositive().isFinite();
        // a core does at most 2 FMA instructions of its widest width per cycle at under 6 GHz; the
        // JVM loop this probe replaced read about a quarter of the real peak
        PeakProbe probe = MachinePeaks.fmaProbe(Target.cpu());
        assertThat(fma).isLessThan(2 * probe.opsPerInstruction * 6.0);
        double bw = MachinePeaks.streamBandwidth(Target.cpu().withCores(1), 1 << 20);
        assertThat(bw).isPositive().isFinite();
    }
}
