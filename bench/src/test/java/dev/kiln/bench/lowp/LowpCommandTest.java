package dev.kiln.bench.lowp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code kiln bench lowp} end to end on tiny sizes (GEMM 64, a 10x10x16 -> 16 3x3 conv, 2 trials,
 * 1 thread): every row that ran has positive time and rate, was checked against the plain-Java
 * reference (int8 exactly), the peaks are positive, and a rerun with --trials 0 builds from the
 * logs. Kiln's int8/bf16 rows must say "skipped: no ..." exactly where the CPU lacks the feature.
 */
class LowpCommandTest {
    @TempDir
    Path dir;

    private List<LowpRow> run(int trials, String... more) {
        LowpCommand cmd = new LowpCommand();
        List<String> args = new java.util.ArrayList<>(List.of(
                "--gemm=64,64,64",
                "--conv=10,10,16,16,3",
                "--trials=" + trials,
                "--threads=1",
                "--in-process",
                "--repeats=2",
                "--warmup-seconds=0",
                "--sample-seconds=0",
                "--peak-iterations=2000000",
                "--out=" + dir));
        args.addAll(List.of(more));
        int rc = new CommandLine(cmd).execute(args.toArray(String[]::new));
        assertThat(rc).as("exit code (1: a mismatch)").isZero();
        return cmd.rows;
    }

    @Test
    void tinyRunChecksEveryOutputAndRetimesFromTheLog() throws Exception {
        List<LowpRow> rows = run(2);
        // 4 probes (the f16 one alone for its dtype) + 2 workloads x 3 precisions x (kiln, onednn)
        assertThat(rows).hasSize(4 + 12);
        assertThat(rows.stream().filter(r -> r.dtype().equals("fp16")))
                .singleElement()
                .satisfies(r -> assertThat(r.impl()).isEqualTo("probe"));
        for (LowpRow r : rows) {
            if (r.impl().equals("kiln") && !r.dtype().equals("f32")) {
                String why = LowpCommand.unavailable(Target.cpu(), r.dtype());
                if (why != null) {
                    assertThat(r.status()).startsWith("skipped: no avx512_");
                    continue;
                }
            }
            if (r.impl().equals("probe")) {
                if (!r.ok()) assertThat(r.status()).startsWith("skipped: no avx512");
                else assertThat(r.rate()).isPositive();
                continue;
            }
            assertThat(r.status()).as(r.toString()).isEqualTo("ok");
            assertThat(r.medianMs()).isPositive();
            assertThat(r.rate()).isPositive();
            assertThat(r.check()).startsWith("checked vs Java reference");
            assertThat(r.vsOnednn()).isPositive();
        }
        List<LowpRow> lowp = rows.stream()
                .filter(r -> r.impl().equals("kiln") && r.ok() && !r.dtype().equals("f32"))
                .toList();
        assertThat(lowp).allSatisfy(r -> assertThat(r.vsKilnF32()).isPositive());
        if (!lowp.isEmpty()) {
            assertThat(lowp)
                    .as("the search tensorized some low-precision kernel")
                    .anyMatch(r -> r.kernel().contains(", tensorized (x86."));
        }
        assertThat(Files.readAllLines(dir.resolve("lowp.tsv"))).hasSize(rows.size() + 1);

        List<LowpRow> again = run(0);
        assertThat(again)
                .filteredOn(r -> r.impl().equals("kiln") && r.ok())
                .isNotEmpty()
                .allSatisfy(r -> assertThat(r.kernel()).startsWith("built from the log"));
    }

    /**
     * --amx lets the search tile for AMX: on a CPU with it the int8 GEMM's kernel is an AMX one, elsewhere the run is
     * the same as without (the dot products, or skipped rows); the property is restored afterwards.
     */
    @Test
    void amxTilesWhereTheCpuHasThem() {
        List<LowpRow> rows = run(2, "--dtypes=int8", "--workloads=gemm", "--amx");
        assertThat(System.getProperty("kiln.search.amx")).isNull();
        List<LowpRow> kiln = rows.stream().filter(r -> r.impl().equals("kiln")).toList();
        assertThat(kiln).hasSize(1);
        boolean hasAmx = dev.kiln.schedule.TensorIntrinsics.get(dev.kiln.schedule.AmxTensorIntrinsics.AMX_U8S8)
                        .unavailableReason(Target.cpu())
                == null;
        if (hasAmx) {
            assertThat(kiln.getFirst().status()).isEqualTo("ok");
            assertThat(kiln.getFirst().kernel()).contains("tensorized (x86.amx.tdpbusd");
        } else if (kiln.getFirst().ok()) {
            assertThat(kiln.getFirst().kernel()).doesNotContain("x86.amx");
        }
    }

    /**
     * --plain: the int8 GEMM written as a plain DSL matmul on B as given is checked exactly like the packed form and,
     * where the CPU has AVX-512 VNNI, tuned onto vpdpbusd by the auto-scheduler's own packing (DotProductLayout).
     */
    @Test
    void aPlainGemmIsPackedByTheAutoScheduler() {
        List<LowpRow> rows = run(2, "--dtypes=int8", "--workloads=gemm", "--plain");
        LowpRow kiln =
                rows.stream().filter(r -> r.impl().equals("kiln")).findFirst().orElseThrow();
        assertThat(kiln.workload()).isEqualTo("GEMM 64x64x64 plain");
        if (LowpCommand.unavailable(Target.cpu(), "int8") != null) {
            assertThat(kiln.status()).startsWith("skipped: no avx512_");
            return;
        }
        assertThat(kiln.status()).isEqualTo("ok");
        assertThat(kiln.check()).startsWith("checked vs Java reference");
        assertThat(kiln.kernel()).contains(", tensorized (x86.avx512.vpdpbusd");
        assertThat(dir.resolve("logs").resolve("gemm-64x64x64-int8-plain.json")).exists();
    }

    /** --dtypes and --workloads restrict the rows (and the probes) to what they name; bad names are refused. */
    @Test
    void dtypesAndWorkloadsRestrictTheRows() {
        List<LowpRow> rows = run(2, "--dtypes=bf16", "--workloads=gemm");
        // the bf16 probe + GEMM in bf16 (kiln, onednn)
        assertThat(rows).hasSize(3);
        assertThat(rows).allSatisfy(r -> assertThat(r.dtype()).isEqualTo("bf16"));
        assertThat(rows.stream().filter(r -> !r.impl().equals("probe")))
                .hasSize(2)
                .allSatisfy(r -> assertThat(r.workload()).startsWith("GEMM"));
        assertThatThrownBy(() -> LowpCommand.checkChoices("--dtypes", List.of("bf16", "fp8"), List.of("bf16")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("--dtypes")
                .hasMessageContaining("'fp8'");
        assertThatThrownBy(() -> LowpCommand.checkChoices("--workloads", List.of(), List.of("gemm")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("--workloads names nothing");
    }
}
