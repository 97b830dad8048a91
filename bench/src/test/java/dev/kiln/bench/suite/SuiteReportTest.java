package dev.kiln.bench.suite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.bench.suite.SuiteRow.Status;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Ratios to the best per workload and thread count, the per-operator geometric mean, and what did not run. */
class SuiteReportTest {
    private static final SuiteWorkload A =
            SuiteWorkloads.parse("GMM\tg\t1,8,8,8\n", "t").getFirst();
    private static final SuiteWorkload B =
            SuiteWorkloads.parse("GMM\tg\t1,16,16,16\n", "t").getFirst();

    private static SuiteRow ok(SuiteWorkload w, int threads, String impl, double medianMs) {
        return new SuiteRow(
                w.op(),
                w.config(),
                threads,
                impl,
                Status.OK,
                "k",
                medianMs,
                medianMs,
                medianMs,
                10,
                1,
                0,
                Double.NaN,
                Double.NaN,
                0,
                Double.NaN,
                Double.NaN,
                "-",
                "-",
                "");
    }

    @Test
    void ratiosAreToTheBestOfEachWorkloadAndThreadCount() {
        List<SuiteRow> rows = SuiteReport.withRatios(List.of(
                ok(A, 1, "kiln", 2),
                ok(A, 1, "pytorch", 1),
                ok(A, 2, "kiln", 4),
                ok(B, 1, "kiln", 1),
                ok(B, 1, "pytorch", 4),
                SuiteRow.notRun(B, 1, "openblas", Status.UNSUPPORTED, "none")));
        assertThat(rows.stream().map(SuiteRow::relToBest).toList().subList(0, 5))
                .containsExactly(0.5, 1.0, 1.0, 1.0, 0.25);
        assertThat(rows.get(5).relToBest()).isNaN();
        Map<String, Map<String, Double>> g = SuiteReport.byOperator(rows, 1, List.of("kiln", "pytorch", "openblas"));
        assertThat(g.get("GMM").get("kiln")).isCloseTo(Math.sqrt(0.5), within(1e-12));
        assertThat(g.get("GMM").get("pytorch")).isCloseTo(0.5, within(1e-12));
        assertThat(g.get("GMM").get("openblas")).isNaN();
        assertThat(SuiteReport.absent(rows, 1)).containsExactly("openblas UNSUPPORTED: GMM (none)");
        assertThat(SuiteReport.table(rows)).contains("GMM 1,16,16,16").contains("UNSUPPORTED");
    }
}
