package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.Target;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * The LLVM backend's cache eviction ({@code kiln_rt_evict}: clflush per line, then a fence), which the tuner's
 * cache flush uses: it keeps the data (dirty lines are written back, not dropped), takes any address and length
 * (unaligned starts and ends, empty segments) and refuses heap memory by name. Timing effects are shown by the
 * benchmarks, not here.
 */
class CacheEvictionTest {
    private static CacheEviction eviction() {
        return JitCheck.BACKEND.cacheEviction(JitCheck.TARGET).orElseThrow();
    }

    @Test
    void evictedMemoryKeepsItsValuesAtAnyAlignmentAndLength() {
        CacheEviction e = eviction();
        try (NDArray a = NDArray.random(DType.FLOAT32, 11, 3, 4099)) {
            NDArray before = a.copy();
            MemorySegment s = a.segment();
            e.evict(s);
            e.evict(s.asSlice(4, 61)); // starts and ends inside a line
            e.evict(s.asSlice(100, 0));
            assertThat(a.compareTo(before, 0, 0).ok()).isTrue();
            s.set(ValueLayout.JAVA_FLOAT, 4 * 5000L, 42f); // a dirty line, evicted, still holds the store
            e.evict(s);
            assertThat(s.get(ValueLayout.JAVA_FLOAT, 4 * 5000L)).isEqualTo(42f);
            before.close();
        }
    }

    @Test
    void heapMemoryIsRefusedByName() {
        assertThatThrownBy(() -> eviction().evict(MemorySegment.ofArray(new float[64])))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("heap segment");
    }

    @Test
    void onlyTheBackendsOwnTargetsHaveIt() {
        assertThat(JitCheck.BACKEND.cacheEviction(JitCheck.TARGET)).isPresent();
        assertThat(JitCheck.BACKEND.cacheEviction(Target.cuda())).isEmpty();
    }
}
