package dev.kiln.cuda.compile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding NVRTC: versions from file names, newest first; the PTX cache's keys and entries. */
class NvrtcLibraryTest {
    @Test
    void versionsComeFromFileNamesAndTheNewestWins() {
        assertEquals(List.of(12, 4, 127), NvrtcLibrary.version("libnvrtc.so.12.4.127"));
        assertEquals(List.of(13), NvrtcLibrary.version("libnvrtc.so.13"));
        assertThat(NvrtcLibrary.compare(List.of(13), List.of(12, 6, 85))).isPositive();
        assertThat(NvrtcLibrary.compare(List.of(12, 4, 127), List.of(12))).isPositive();
        assertThat(NvrtcLibrary.compare(List.of(12, 4), List.of(12, 6))).isNegative();
        assertEquals(0, NvrtcLibrary.compare(List.of(12, 4), List.of(12, 4)));
    }

    @Test
    void theProjectFolderAndTheSystemPropertyAreSearched(@TempDir Path dir) throws Exception {
        Files.createFile(dir.resolve("libnvrtc.so.99.1"));
        Files.createFile(dir.resolve("libnvrtc-builtins.so.99.1"));
        Files.createFile(dir.resolve("libnvrtc.so")); // a dev symlink name without version: not a candidate
        String old = System.getProperty("kiln.nvrtc.path");
        System.setProperty("kiln.nvrtc.path", dir.toString());
        try {
            assertEquals(dir, NvrtcLibrary.searchDirectories().getFirst());
            assertThat(NvrtcLibrary.candidates())
                    .extracting(NvrtcLibrary.Candidate::path)
                    .contains(dir.resolve("libnvrtc.so.99.1"))
                    .doesNotContain(dir.resolve("libnvrtc.so"));
            assertEquals(
                    dir.resolve("libnvrtc.so.99.1"),
                    NvrtcLibrary.newest().orElseThrow().path());
            assertEquals(
                    dir.resolve("libnvrtc-builtins.so.99.1"),
                    NvrtcLibrary.builtinsBeside(dir.resolve("libnvrtc.so.99.1")).orElseThrow());
        } finally {
            if (old == null) System.clearProperty("kiln.nvrtc.path");
            else System.setProperty("kiln.nvrtc.path", old);
        }
        assertThat(NvrtcLibrary.searchDirectories()).doesNotContain(dir);
    }

    @Test
    void ptxCacheKeysSeparateSourceArchFlagsAndCompiler(@TempDir Path dir) {
        String k = PtxCache.key("src", "sm_90", List.of("--fmad=false"), "nvrtc 12.4");
        assertThat(k).hasSize(64);
        assertThat(PtxCache.key("src ", "sm_90", List.of("--fmad=false"), "nvrtc 12.4"))
                .isNotEqualTo(k);
        assertThat(PtxCache.key("src", "sm_80", List.of("--fmad=false"), "nvrtc 12.4"))
                .isNotEqualTo(k);
        assertThat(PtxCache.key("src", "sm_90", List.of("--use_fast_math"), "nvrtc 12.4"))
                .isNotEqualTo(k);
        assertThat(PtxCache.key("src", "sm_90", List.of("--fmad=false"), "nvrtc 13.0"))
                .isNotEqualTo(k);
        PtxCache cache = new PtxCache(dir.resolve("sub"));
        assertThat(cache.get(k)).isEmpty();
        assertThat(cache.put(k, ".version 8.4\n")).isTrue();
        assertThat(cache.get(k)).contains(".version 8.4\n");
        assertThat(new PtxCache(dir.resolve("sub")).get(k)).contains(".version 8.4\n");
    }
}
