package dev.kiln.bench.suite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.bench.suite.SuiteRow.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Several timing passes as one row each: the fastest pass by median, the first pass's tuning, failures kept. */
class SuitePassesTest {
    private static final SuiteWorkload A =
            SuiteWorkloads.parse("GMM\tg\t1,8,8,8\n", "t").getFirst();
    private static final SuiteWorkload B =
            SuiteWorkloads.parse("C2D\tc\t1,6,6,4,8,3,1,1\n", "t").getFirst();

    private static SuiteRow row(
            SuiteWorkload w, String impl, Status status, double medianMs, int trials, String kernel) {
        return new SuiteRow(
                w.op(),
                w.config(),
                2,
                impl,
                status,
                kernel,
                medianMs * 0.9,
                medianMs,
                medianMs * 1.2,
                100,
                10 / medianMs,
                1e-6 * medianMs,
                Double.NaN,
                trials > 0 ? 30.0 : Double.NaN,
                trials,
                trials > 0 ? 0.3 : Double.NaN,
                trials > 0 ? 0.2 : Double.NaN,
                "0.1/0.1/0.1",
                "0.2/0.2/0.2",
                "");
    }

    @Test
    void eachRowKeepsItsFastestPassAndTheFirstPassesTuning() {
        List<SuiteRow> pass1 = List.of(
                row(A, "kiln", Status.OK, 1.8, 100, "tuned, best of 100 trials"),
                row(A, "onednn", Status.OK, 1.0, 0, "brgemm"),
                SuiteRow.notRun(B, 2, "openblas", Status.UNSUPPORTED, "no conv"));
        List<SuiteRow> pass2 = List.of(
                row(A, "kiln", Status.OK, 1.2, 0, "built from the log (no search)"),
                row(A, "onednn", Status.OK, 1.1, 0, "brgemm"),
                SuiteRow.notRun(B, 2, "openblas", Status.UNSUPPORTED, "no conv"));
        List<SuiteRow> merged = SuitePasses.fastest(List.of(pass1, pass2));
        assertThat(merged).hasSize(3);
        SuiteRow kiln = merged.get(0);
        assertThat(kiln.medianMs()).isEqualTo(1.2);
        assertThat(kiln.minMs()).isEqualTo(1.2 * 0.9);
        assertThat(kiln.gflops()).isEqualTo(10 / 1.2);
        assertThat(kiln.kernel()).isEqualTo("tuned, best of 100 trials");
        assertThat(kiln.trials()).isEqualTo(100);
        assertThat(kiln.tuneSeconds()).isEqualTo(30.0);
        assertThat(kiln.maxAbsErr()).isEqualTo(1.8e-6); // the worst error of any pass
        assertThat(kiln.notes()).isEqualTo("2 passes, medians 1.800, 1.200 ms: pass 2 kept");
        assertThat(merged.get(1).medianMs()).isEqualTo(1.0);
        assertThat(merged.get(1).notes()).endsWith("pass 1 kept");
        assertThat(merged.get(2).status()).isEqualTo(Status.UNSUPPORTED);
        assertThat(merged.get(2).notes()).isEqualTo("no conv");
        assertThat(SuitePasses.fastest(List.of(pass1))).isEqualTo(pass1);
    }

    @Test
    void aPassThatFailedIsReportedNotHiddenBehindAGoodOne() {
        SuiteRow wrong = row(A, "kiln", Status.MISMATCH, 0.5, 0, "built from the log (no search)");
        List<SuiteRow> merged =
                SuitePasses.fastest(List.of(List.of(row(A, "kiln", Status.OK, 1.0, 100, "tuned")), List.of(wrong)));
        assertThat(merged).singleElement().satisfies(r -> {
            assertThat(r.status()).isEqualTo(Status.MISMATCH);
            assertThat(r.notes()).isEqualTo("failed in pass 2 of 2");
        });
        SuiteRow crashed = SuiteRow.notRun(A, 2, "kiln", Status.CRASHED, "the child JVM exited with 134");
        assertThat(SuitePasses.fastest(List.of(List.of(crashed), List.of(row(A, "kiln", Status.OK, 1.0, 0, "k")))))
                .singleElement()
                .satisfies(r -> {
                    assertThat(r.status()).isEqualTo(Status.CRASHED);
                    assertThat(r.notes()).isEqualTo("the child JVM exited with 134; failed in pass 1 of 2");
                });
    }
}
