package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The workload file carries the arguments and the reference outputs to the worker unchanged. */
class WorkloadFileTest {
    @TempDir
    Path dir;

    @Test
    void argumentsAndReferencesRoundTripBitForBit() {
        List<ArgumentSpec> args = List.of(
                new ArgumentSpec("A", DType.FLOAT32, new long[] {3, 5}, true),
                new ArgumentSpec("idx", DType.INT8, new long[] {7}, true),
                new ArgumentSpec("out16", DType.FLOAT16, new long[] {2, 3, 3}, false),
                new ArgumentSpec("mask", DType.BOOL, new long[] {11}, false),
                new ArgumentSpec("wide", DType.FLOAT64, new long[] {1000, 300}, false),
                new ArgumentSpec("quantized", DType.INT8, new long[] {9}, false, true));
        List<NDArray> refs = List.of(
                NDArray.random(DType.FLOAT16, 1, 2, 3, 3),
                NDArray.random(DType.BOOL, 2, 11),
                NDArray.random(DType.FLOAT64, 3, 1000, 300),
                NDArray.random(DType.INT8, 4, 9));
        Path f = dir.resolve("w.bin");
        try (Workload w = new Workload(args, 77, refs);
                Workload back = roundTrip(w, f)) {
            assertThat(back.seed()).isEqualTo(77);
            assertThat(back.args()).isEqualTo(args);
            for (int i = 0; i < refs.size(); i++) back.references().get(i).assertClose(refs.get(i), 0, 0);
            // inputs are drawn from the seed on both sides
            assertThat(back.inputs().get(0).toFloatArray())
                    .containsExactly(w.inputs().get(0).toFloatArray());
            assertThat(back.inputs().get(1).toLongArray())
                    .containsExactly(NDArray.random(DType.INT8, 78, 7).toLongArray());
        }
    }

    @Test
    void aWorkloadWithoutReferencesHasNothingToCheck() {
        List<ArgumentSpec> args = List.of(
                new ArgumentSpec("A", DType.INT32, new long[] {4}, true),
                new ArgumentSpec("B", DType.INT32, new long[] {4}, false));
        try (Workload w = new Workload(args, 1, List.of());
                Workload back = roundTrip(w, dir.resolve("n.bin"))) {
            assertThat(back.hasReferences()).isFalse();
            assertThat(back.args()).isEqualTo(args);
        }
    }

    @Test
    void otherFilesAreRefused() throws IOException {
        Path f = dir.resolve("junk.bin");
        Files.write(f, new byte[] {0, 3, 'a', 'b', 'c'});
        assertThatThrownBy(() -> WorkloadFile.read(f))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("not a workload file");
        List<ArgumentSpec> args = List.of(new ArgumentSpec("O", DType.FLOAT32, new long[] {64}, false));
        Path g = dir.resolve("cut.bin");
        try (Workload w = new Workload(args, 1, List.of(NDArray.random(DType.FLOAT32, 5, 64)))) {
            WorkloadFile.write(w, g);
        }
        byte[] all = Files.readAllBytes(g);
        Files.write(g, java.util.Arrays.copyOf(all, all.length - 10));
        assertThatThrownBy(() -> WorkloadFile.read(g))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("ends inside");
    }

    private static Workload roundTrip(Workload w, Path f) {
        WorkloadFile.write(w, f);
        return WorkloadFile.read(f);
    }
}
