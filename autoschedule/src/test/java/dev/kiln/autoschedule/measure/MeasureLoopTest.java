package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The measuring loop on a scripted device (no kernel, no clock): the order of the checked run,
 * warm-up, calibration and repeats, the per-device limits, and how failures are classified.
 */
class MeasureLoopTest {
    /** A device whose runs take {@code secondsPerRun} each and that records what the loop asked of it. */
    static class FakeDevice implements MeasureLoop.Device {
        final List<String> calls = new ArrayList<>();
        final double secondsPerRun;
        /** What the checked run takes (a hiccup where it differs from {@link #secondsPerRun}). */
        double checkedSeconds;

        boolean references = true;
        String wrong;
        RuntimeException failOnTime;
        RuntimeException failedWith;

        FakeDevice(double secondsPerRun) {
            this.secondsPerRun = secondsPerRun;
            this.checkedSeconds = secondsPerRun;
        }

        @Override
        public boolean hasReferences() {
            return references;
        }

        @Override
        public void prepareCheck() {
            calls.add("poison");
        }

        @Override
        public double runChecked() {
            calls.add("checked");
            return checkedSeconds;
        }

        @Override
        public String compareOutputs() {
            calls.add("compare");
            return wrong;
        }

        @Override
        public void launch() {
            calls.add("launch");
        }

        @Override
        public double time(long number) {
            if (failOnTime != null) throw failOnTime;
            calls.add("time " + number);
            return secondsPerRun;
        }

        @Override
        public void flushCache() {
            calls.add("flush");
        }

        @Override
        public void afterTiming() {
            calls.add("after");
        }

        @Override
        public void failed(RuntimeException e) {
            failedWith = e;
        }
    }

    static final MeasureLoop.Limits GPU = new MeasureLoop.Limits(1 << 20, false, true);

    @Test
    void checkedRunThenWarmupThenCalibrationThenRepeats() {
        FakeDevice d = new FakeDevice(1e-3);
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(3)
                .withNumber(1)
                .withWarmup(2)
                .withMinRepeatMs(10);
        MeasureLoop.Outcome out = MeasureLoop.run(d, o, GPU);
        assertThat(out.error()).isEqualTo(MeasureError.NONE);
        assertThat(out.costs()).containsExactly(1e-3, 1e-3, 1e-3);
        // 1 ms per run, 10 ms per repeat: number 1 -> max(2, ceil(10 / 1 * 1.1)) = 11 (or 12 by rounding), then kept
        long n = (long) Math.ceil(10e-3 / 1e-3 * 1.1);
        assertThat(n).isBetween(11L, 12L);
        assertThat(d.calls)
                .containsExactly(
                        "poison",
                        "checked",
                        "compare",
                        "launch",
                        "launch",
                        "time 1",
                        "time " + n,
                        "time " + n,
                        "time " + n,
                        "time " + n,
                        "after");
    }

    @Test
    void aProgramSlowerThanTheBarIsCheckedThenTimedOnceAfterAFlush() {
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(10)
                .withWarmup(2)
                .withWarmupMs(100)
                .withFlushCache(true);
        FakeDevice slow = new FakeDevice(0.7);
        MeasureLoop.Outcome out = MeasureLoop.run(slow, o, MeasureLoop.Limits.CPU, 0.5);
        assertThat(out.error()).isEqualTo(MeasureError.NONE);
        assertThat(out.costs()).containsExactly(0.7);
        assertThat(slow.calls).containsExactly("poison", "checked", "compare", "flush", "time 1", "after");
        // Under the bar: the full warm-up and ten flushed repeats.
        FakeDevice fast = new FakeDevice(0.4);
        assertThat(MeasureLoop.run(fast, o, MeasureLoop.Limits.CPU, 0.5).costs())
                .hasSize(10);
        assertThat(fast.calls).contains("launch").filteredOn("flush"::equals).hasSize(10);
        // A checked run slow by accident: the one timed run is under the bar, so the program is measured in full
        // (this once cost CI a program timed once at 5 ms that runs in 1 us).
        FakeDevice hiccup = new FakeDevice(0.4);
        hiccup.checkedSeconds = 0.9;
        MeasureLoop.Outcome h = MeasureLoop.run(hiccup, o, MeasureLoop.Limits.CPU, 0.5);
        assertThat(h.costs()).hasSize(10).containsOnly(0.4);
        assertThat(hiccup.calls).startsWith("poison", "checked", "compare", "flush", "time 1", "launch");
        assertThat(hiccup.calls).filteredOn("flush"::equals).hasSize(11);
        assertThat(hiccup.calls).filteredOn("after"::equals).hasSize(1);
        // A wrong result is still a wrong result, however slow.
        FakeDevice wrong = new FakeDevice(0.7);
        wrong.wrong = "output 'C' differs";
        assertThat(MeasureLoop.run(wrong, o, MeasureLoop.Limits.CPU, 0.5).error())
                .isEqualTo(MeasureError.WRONG_RESULT);
    }

    /** A fake device that records its warm-ups by time instead of running them. */
    static class WarmupRecorder extends FakeDevice {
        WarmupRecorder(double secondsPerRun) {
            super(secondsPerRun);
        }

        @Override
        public void warmUp(double ms) {
            calls.add("warm-up " + (long) ms + " ms");
        }
    }

    @Test
    void aFlushedProgramBehindTheBarKeepsItsTimingAfterTheShortWarmupAndAContenderIsWarmedUpInFull() {
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(2)
                .withWarmup(1)
                .withWarmupMs(100)
                .withFlushCache(true);
        List<String> quick = List.of(
                "poison", "checked", "compare", "launch", "warm-up 10 ms", "flush", "time 1", "flush", "time 1");
        // behind the bar (1.3x the workload's best, say): the short warm-up and one set of repeats
        WarmupRecorder behind = new WarmupRecorder(2e-3);
        MeasureLoop.Outcome b = MeasureLoop.run(behind, o, MeasureLoop.Limits.CPU, 1.0, 1.5e-3);
        assertThat(b.costs()).containsExactly(2e-3, 2e-3);
        assertThat(behind.calls).containsExactlyElementsOf(concat(quick, List.of("after")));
        // a contender: the rest of the warm-up, then timed again
        WarmupRecorder contender = new WarmupRecorder(1e-3);
        MeasureLoop.Outcome c = MeasureLoop.run(contender, o, MeasureLoop.Limits.CPU, 1.0, 1.5e-3);
        assertThat(c.costs()).containsExactly(1e-3, 1e-3);
        assertThat(contender.calls)
                .containsExactlyElementsOf(
                        concat(quick, List.of("warm-up 100 ms", "flush", "time 1", "flush", "time 1", "after")));
        // no bar yet (the workload's first program) or warm caches: the full warm-up at once
        for (MeasureOptions opts : List.of(o, o.withFlushCache(false))) {
            WarmupRecorder d = new WarmupRecorder(2e-3);
            double bar = opts.flushCache() ? Double.POSITIVE_INFINITY : 1.5e-3;
            MeasureLoop.run(d, opts, MeasureLoop.Limits.CPU, 1.0, bar);
            assertThat(d.calls).contains("warm-up 100 ms").doesNotContain("warm-up 10 ms");
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    void theContendersBarIsThirtyPercentOverTheFastestOfTheWorkload() {
        SlowPrograms slow = new SlowPrograms();
        assertThat(slow.promising("a")).isInfinite();
        slow.timed("a", new double[] {0.02, 0.01});
        assertThat(slow.promising("a")).isEqualTo(0.013, org.assertj.core.api.Assertions.within(1e-12));
        assertThat(slow.promising("b")).isInfinite();
    }

    @Test
    void theBarIsTenTimesTheFastestOfTheWorkloadAndNeverUnderTheFloor() {
        SlowPrograms slow = new SlowPrograms();
        assertThat(slow.bar("a")).isInfinite();
        slow.timed("a", new double[0]); // a failed program sets no bar
        assertThat(slow.bar("a")).isInfinite();
        slow.timed("a", new double[] {0.02, 0.012, 0.015});
        assertThat(slow.bar("a")).isEqualTo(0.12, org.assertj.core.api.Assertions.within(1e-12));
        slow.timed("a", new double[] {0.5});
        assertThat(slow.bar("a")).isEqualTo(0.12, org.assertj.core.api.Assertions.within(1e-12));
        slow.timed("b", new double[] {1e-4});
        assertThat(slow.bar("b")).isEqualTo(SlowPrograms.FLOOR_SECONDS);
        assertThat(slow.bar("c")).isInfinite();
    }

    @Test
    void withoutMinRepeatMsThereIsNoCalibrationAndTheCpuWarmsUpByTime() {
        FakeDevice d = new FakeDevice(2e-3);
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(2)
                .withNumber(3)
                .withWarmup(0)
                .withWarmupMs(1)
                .withMinRepeatMs(0);
        MeasureLoop.Outcome out = MeasureLoop.run(d, o, MeasureLoop.Limits.CPU);
        assertThat(out.error()).isEqualTo(MeasureError.NONE);
        assertThat(d.calls.subList(0, 3)).containsExactly("poison", "checked", "compare");
        assertThat(d.calls.subList(3, d.calls.size() - 3)).isNotEmpty().allMatch("launch"::equals);
        assertThat(d.calls.subList(d.calls.size() - 3, d.calls.size())).containsExactly("time 3", "time 3", "after");
    }

    @Test
    void calibrationStopsAtTheDevicesLimit() {
        FakeDevice d = new FakeDevice(1e-9);
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(1)
                .withNumber(1)
                .withWarmup(0)
                .withMinRepeatMs(1000);
        MeasureLoop.Outcome out = MeasureLoop.run(d, o, new MeasureLoop.Limits(64, false, false));
        assertThat(out.error()).isEqualTo(MeasureError.NONE);
        assertThat(d.calls).endsWith("time 64", "time 64", "after");
        assertThat(d.calls).noneMatch(c -> c.startsWith("time ") && Long.parseLong(c.substring(5)) > 64);
    }

    @Test
    void aFlushedRepeatIsOneRunAfterAFlush() {
        FakeDevice d = new FakeDevice(1e-3);
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(2)
                .withNumber(7)
                .withWarmup(1)
                .withMinRepeatMs(50)
                .withFlushCache(true);
        MeasureLoop.run(d, o, GPU);
        assertThat(d.calls)
                .containsExactly(
                        "poison", "checked", "compare", "launch", "flush", "time 1", "flush", "time 1", "after");
    }

    @Test
    void outputsAreComparedOnlyWhenAskedAndAvailable() {
        FakeDevice none = new FakeDevice(1e-3);
        none.references = false;
        MeasureOptions o =
                MeasureOptions.defaults().withRepeats(1).withWarmup(0).withWarmupMs(0);
        MeasureLoop.run(none, o, MeasureLoop.Limits.CPU);
        assertThat(none.calls).doesNotContain("poison", "compare");
        FakeDevice off = new FakeDevice(1e-3);
        MeasureLoop.run(off, o.withCheckCorrectness(false), MeasureLoop.Limits.CPU);
        assertThat(off.calls).doesNotContain("poison", "compare");
    }

    @Test
    void failuresAreClassifiedOnceForEveryDevice() {
        MeasureOptions o = MeasureOptions.defaults()
                .withRepeats(2)
                .withWarmup(0)
                .withWarmupMs(0)
                .withTimeoutSeconds(0.5);
        FakeDevice wrong = new FakeDevice(1e-3);
        wrong.wrong = "output 'y' differs";
        MeasureLoop.Outcome w = MeasureLoop.run(wrong, o, GPU);
        assertThat(w.error()).isEqualTo(MeasureError.WRONG_RESULT);
        assertThat(w.message()).isEqualTo("output 'y' differs");
        assertThat(wrong.calls).doesNotContain("launch");

        FakeDevice slow = new FakeDevice(0.75);
        MeasureLoop.Outcome t = MeasureLoop.run(slow, o, GPU);
        assertThat(t.error()).isEqualTo(MeasureError.TIMEOUT);
        assertThat(t.message()).isEqualTo("one run took 0.750 s, more than the 0.5 s allowed");
        assertThat(MeasureLoop.run(new FakeDevice(0.75), o, MeasureLoop.Limits.CPU)
                        .error())
                .as("on a CPU the worker process enforces the time-out")
                .isEqualTo(MeasureError.NONE);

        FakeDevice throwing = new FakeDevice(1e-3);
        throwing.failOnTime = new IllegalStateException("launch failed");
        MeasureLoop.Outcome e = MeasureLoop.run(throwing, o, GPU);
        assertThat(e.error()).isEqualTo(MeasureError.RUNTIME);
        assertThat(e.message()).isEqualTo("while timing: IllegalStateException: launch failed");
        assertThat(throwing.failedWith).isSameAs(throwing.failOnTime);

        FakeDevice kiln = new FakeDevice(1e-3) {
            @Override
            public double runChecked() {
                throw new KilnException("kernel 'f' argument 0 (parameter 'A') is closed");
            }
        };
        MeasureLoop.Outcome k = MeasureLoop.run(kiln, o, GPU);
        assertThat(k.error()).isEqualTo(MeasureError.RUNTIME);
        assertThat(k.message()).isEqualTo("kernel 'f' argument 0 (parameter 'A') is closed");
        assertThat(k.toResult(0.25).compileSeconds()).isEqualTo(0.25);
        assertThat(k.toResult(0.25).error()).isEqualTo(MeasureError.RUNTIME);
    }

    @Test
    void limitsAndOutcomesAreValidated() {
        assertThatThrownBy(() -> new MeasureLoop.Limits(0, true, false))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("maxNumber");
        assertThatThrownBy(() -> MeasureLoop.Outcome.failed(MeasureError.NONE, ""))
                .isInstanceOf(KilnException.class);
    }
}
