package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The tile-size enumeration of InitFillTileSize against a brute-force count. */
class FactorizationMemoTest {
    private final FactorizationMemo memo = new FactorizationMemo();

    @Test
    void powersOfTwoAndPrimes() {
        // (2^a, 2^b, 2^c) with a + b + c <= 3: C(6, 3) = 20
        assertThat(memo.schemes(8, 3, 64)).hasSize(20);
        // innermost <= 2: c = 0 gives 10, c = 1 gives 6
        assertThat(memo.schemes(8, 3, 2)).hasSize(16);
        assertThat(memo.schemes(7, 1, 64)).containsExactly(List.of(1), List.of(7));
        assertThat(memo.schemes(7, 2, 64)).containsExactly(List.of(1, 1), List.of(1, 7), List.of(7, 1));
        assertThat(memo.schemes(1, 3, 64)).containsExactly(List.of(1, 1, 1));
        assertThat(memo.schemes(128, 1, 64).getLast()).isEqualTo(List.of(64));
        assertThat(memo.divisors(36)).containsExactly(1, 2, 3, 4, 6, 9, 12, 18, 36);
    }

    @Test
    void everySchemeIsExactAndEveryExactSchemeIsListed() {
        SplittableRandom rng = new SplittableRandom(11);
        for (int t = 0; t < 40; t++) {
            long extent = 1 + rng.nextInt(400);
            int n = 1 + rng.nextInt(3);
            int max = 1 + rng.nextInt(70);
            List<List<Integer>> s = memo.schemes(extent, n, max);
            assertThat(new HashSet<>(s)).hasSameSizeAs(s);
            for (List<Integer> l : s) {
                long prod = 1;
                for (int x : l) prod *= x;
                assertThat(extent % prod).as("%s divides %d", l, extent).isZero();
                assertThat(l.getLast()).isLessThanOrEqualTo(max);
            }
            assertThat(s)
                    .as("extent %d, %d lengths, max %d", extent, n, max)
                    .hasSize(bruteForce(extent, n, max).size());
        }
    }

    private static List<List<Integer>> bruteForce(long extent, int n, int max) {
        List<List<Integer>> out = new ArrayList<>();
        enumerate(new ArrayList<>(), extent, n, max, out);
        return out;
    }

    private static void enumerate(List<Integer> prefix, long rest, int n, int max, List<List<Integer>> out) {
        if (prefix.size() == n) {
            if (prefix.getLast() <= max) out.add(List.copyOf(prefix));
            return;
        }
        for (int f = 1; f <= rest; f++) {
            if (rest % f != 0) continue;
            prefix.add(f);
            enumerate(prefix, rest / f, n, max, out);
            prefix.removeLast();
        }
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> memo.schemes(0, 2, 64))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("extent 0");
        assertThatThrownBy(() -> memo.schemes(8, 0, 64)).isInstanceOf(KilnException.class);
        assertThatThrownBy(() -> memo.schemes(8, 2, 0)).isInstanceOf(KilnException.class);
    }
}
