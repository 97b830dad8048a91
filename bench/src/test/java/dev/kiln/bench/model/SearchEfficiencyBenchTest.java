package dev.kiln.bench.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The re-measured trials-to-95% of {@code ./kiln search-bench}: marks, the first mark reaching a share, the table. */
class SearchEfficiencyBenchTest {

    private static final int[] CHECKPOINTS = {64, 100, 128, 192, 256, 384, 512, 768, 1000};

    @Test
    void theMarksEndAtTheTrialBudget() {
        assertArrayEquals(CHECKPOINTS, SearchEfficiencyBench.marks(CHECKPOINTS, 1000));
        assertArrayEquals(new int[] {64, 100, 128, 150}, SearchEfficiencyBench.marks(CHECKPOINTS, 150));
        assertArrayEquals(new int[] {40}, SearchEfficiencyBench.marks(CHECKPOINTS, 40));
    }

    @Test
    void aRunReachesAtTheFirstMarkWithinTheShareOfItsOwnLastProgram() {
        int[] marks = {64, 100, 128, 1000};
        // re-measured: the best program after 100 trials runs at 96% of the final one
        assertEquals(100, SearchEfficiencyBench.firstMarkReaching(marks, new double[] {80, 96, 97, 100}, 0.95));
        // an early program that re-measures faster than the final one reaches at once
        assertEquals(64, SearchEfficiencyBench.firstMarkReaching(marks, new double[] {101, 101, 101, 100}, 0.95));
        // only the last program itself: the budget
        assertEquals(1000, SearchEfficiencyBench.firstMarkReaching(marks, new double[] {50, 60, 94.9, 100}, 0.95));
        // no valid final program
        assertEquals(-1, SearchEfficiencyBench.firstMarkReaching(marks, new double[] {0, 0, 0, 0}, 0.95));
    }

    @Test
    void theTableGivesSharesPerRunAndCountsRunsThatReachBy100() {
        int[] marks = {64, 100, 1000};
        String t = SearchEfficiencyBench.reachTable(
                List.of("learned", "pretrained", "learned", "pretrained"),
                List.of(1L, 1L, 2L, 2L),
                marks,
                new double[][] {{50, 90, 100}, {96, 98, 100}, {100, 100, 100}, {40, 80, 200}},
                "learned");
        // the common bar: 95% of the learned runs' mean final program, 100
        assertTrue(t.contains("95.0, 95% of the mean re-measured final program of 'learned'"), t);
        assertTrue(t.contains("| learned | 1 | 0.500 (50.0) | 0.900 (90.0) | 1.000 (100.0) | 1000 | 1000 |"), t);
        assertTrue(t.contains("| pretrained | 1 | 0.960 (96.0) | 0.980 (98.0) | 1.000 (100.0) | 64 | 64 |"), t);
        // a run that reaches its own final only at the end, but the common bar at 100
        assertTrue(t.contains("| pretrained | 2 | 0.200 (40.0) | 0.400 (80.0) | 1.000 (200.0) | 1000 | 1000 |"), t);
        assertTrue(
                t.contains("| learned | mean | 0.750 | 0.950 | 1.000 | 1 of 2 runs by 100 | 1 of 2 runs by 100 |"), t);
        assertTrue(
                t.contains("| pretrained | mean | 0.580 | 0.690 | 1.000 | 1 of 2 runs by 100 | 1 of 2 runs by 100 |"),
                t);
        // mean rates against the reference's mean final program (100)
        assertTrue(t.contains("| learned | 75.0 (0.750) | 95.0 (0.950) | 100.0 (1.000) |"), t);
        assertTrue(t.contains("| pretrained | 68.0 (0.680) | 89.0 (0.890) | 150.0 (1.500) |"), t);
    }

    @Test
    void aRunThatStallsReachesItsOwnFinalEarlyButNotTheCommonBar() {
        int[] marks = {64, 100, 1000};
        String t = SearchEfficiencyBench.reachTable(
                List.of("learned", "pretrained"),
                List.of(1L, 1L),
                marks,
                new double[][] {{50, 150, 200}, {150, 150, 150}},
                "learned");
        assertTrue(
                t.contains("| pretrained | 1 | 1.000 (150.0) | 1.000 (150.0) | 1.000 (150.0) | 64 | not reached |"), t);
        assertEquals(-1, SearchEfficiencyBench.firstMarkAtOrAbove(marks, new double[] {150, 150, 150}, 190));
        assertEquals(100, SearchEfficiencyBench.firstMarkAtOrAbove(marks, new double[] {50, 190, 200}, 190));
        // without a run of the reference policy there is no common bar
        assertTrue(SearchEfficiencyBench.reachTable(
                        List.of("pretrained"), List.of(1L), marks, new double[][] {{1, 2, 3}}, "learned")
                .contains("a common bar (none: no run of 'learned')"));
    }
}
