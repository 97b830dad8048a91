package dev.kiln.bench.suite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The workload list, its parser and the DAG of every operator; the result rows' parser. */
class SuiteWorkloadsTest {

    @Test
    void theBuiltInListIsTheAnsorSuite() {
        List<SuiteWorkload> all = SuiteWorkloads.builtIn();
        assertThat(all).hasSize(52);
        assertThat(all.stream().map(SuiteWorkload::op).distinct()).containsExactlyElementsOf(SuiteWorkload.OPS);
        assertThat(all.getFirst().source()).isEqualTo("ansor-ops.tsv (built in):6");
    }

    @Test
    void everyWorkloadBuildsItsDag() {
        for (SuiteWorkload w : SuiteWorkloads.builtIn())
            assertThat(SuiteDags.of(w).flopCount()).as(w.label()).isPositive();
        SuiteWorkload gmm = SuiteWorkloads.parse("GMM\tbatch_matmul\t1,1024,1024,1024\n", "t")
                .getFirst();
        assertThat(SuiteDags.of(gmm).flopCount()).isEqualTo(2L * 1024 * 1024 * 1024);
    }

    @Test
    void selectionByOperatorAndBatch() {
        List<SuiteWorkload> s = SuiteWorkloads.select(SuiteWorkloads.builtIn(), List.of("c2d", "SFM"), 16);
        assertThat(s).hasSize(8);
        assertThat(s.getFirst().label()).isEqualTo("C2D 16,224,224,3,64,7,2,3");
        assertThat(s.getLast().label()).isEqualTo("SFM 2048,2048"); // softmax has no batch
        assertThatThrownBy(() -> SuiteWorkloads.select(SuiteWorkloads.builtIn(), List.of("C4D"), 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("--ops: unknown operator 'C4D'");
    }

    @Test
    void aBadLineIsRejectedNamingItsLine() {
        String text = "# comment\nGMM\tbmm\t1,8,8,8\nGMM\tbmm\t1,8,x,8\n";
        assertThatThrownBy(() -> SuiteWorkloads.parse(text, "mine.tsv"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("mine.tsv:3")
                .hasMessageContaining("'1,8,x,8'");
        assertThatThrownBy(() -> SuiteWorkloads.parse("C2D\tconv\t1,8,8\n", "mine.tsv"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("mine.tsv:1: C2D takes 8 parameters, got 3");
        assertThatThrownBy(() -> SuiteWorkloads.parse("C2D only two\tfields\n", "mine.tsv"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("mine.tsv:1: expected 3 tab-separated fields");
        assertThatThrownBy(() -> SuiteWorkloads.parse("C2D\tconv\t1,8,8,4,0,3,1,1\n", "mine.tsv"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("mine.tsv:1")
                .hasMessageContaining("positive");
    }

    @Test
    void resultRowsRoundTripAndABadOneIsNamed() {
        SuiteWorkload w =
                SuiteWorkloads.parse("CAP\tcap\t1,8,8,16,16,3,1,1\n", "t").getFirst();
        SuiteRow r = SuiteRow.notRun(w, 2, "onednn", SuiteRow.Status.UNSUPPORTED, "oneDNN has no capsule convolution");
        assertThat(SuiteRow.parse(r.toTsv(), "x")).isEqualTo(r);
        String bad = r.toTsv().replace("UNSUPPORTED", "FINE");
        assertThatThrownBy(() -> SuiteRow.parseAll(List.of(SuiteRow.HEADER, r.toTsv(), bad), "rows.tsv"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("rows.tsv:3");
    }
}
