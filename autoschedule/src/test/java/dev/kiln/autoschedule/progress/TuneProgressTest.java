package dev.kiln.autoschedule.progress;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What the progress display shows, and that the bar stays off without a terminal. */
class TuneProgressTest {

    @Test
    void theBarShowsTrialsBestSpeedAndErrors() {
        List<String> lines = new CopyOnWriteArrayList<>();
        TerminalProgressBar bar = new TerminalProgressBar(lines::add);
        bar.start("C", new ProgressState(3, 40, 0, 0, Duration.ZERO));
        bar.update(new ProgressState(11, 40, 12.345, 2, Duration.ofSeconds(3)));
        bar.update(new ProgressState(17, 40, 15.5, 3, Duration.ofSeconds(5)));
        bar.close();
        String last = lines.getLast();
        assertThat(last).contains("tune C").contains("17/40").contains("best 15.50 GFLOP/s, 3 errors");
        // The library draws the elapsed time as h:mm:ss (elapsed / left).
        assertThat(last).containsPattern("\\(\\d+:\\d\\d:\\d\\d");
    }

    @Test
    void statesReadAsOneLine() {
        ProgressState s = new ProgressState(64, 200, 31.25, 1, Duration.ofSeconds(3725));
        assertThat(s.line()).isEqualTo("64/200 trials, best 31.25 GFLOP/s, 1 error, 01:02:05 elapsed");
        assertThat(new ProgressState(0, 10, 0, 0, Duration.ZERO).summary()).isEqualTo("best - GFLOP/s, 0 errors");
        assertThat(new ProgressState(5, 10, 2.5, 1, Duration.ZERO, "GOP/s").summary())
                .isEqualTo("best 2.50 GOP/s, 1 error");
    }

    @Test
    void withoutATerminalNoBarIsDrawn() {
        // Test runners do not give the JVM a terminal; the option alone does not draw a bar.
        assertThat(TuneProgress.hasTerminal()).isFalse();
        assertThat(TuneProgress.forRun(true, false)).isNotInstanceOf(TerminalProgressBar.class);
        assertThat(TuneProgress.forRun(true, true)).isNotInstanceOf(TerminalProgressBar.class);
    }
}
