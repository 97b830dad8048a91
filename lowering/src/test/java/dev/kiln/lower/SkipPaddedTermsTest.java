package dev.kiln.lower;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.lower.PassChecks.assertSameResults;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Pad;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmts;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Zero-padding terms skipped: the guards go where the padded rows' reduction loop lies outside the register tile
 * and not inside it, the numbers stay bit-identical on seeded finite inputs (interpreter), a weight of infinity
 * shows which terms are skipped, and the pass runs only on fast-math CPU targets.
 */
class SkipPaddedTermsTest {

    /** conv2d NHWC, 3 x 3 weights, padding {@code dilation} (so the output keeps the image's size). */
    private static ComputeDAG conv(int h, int w, int ci, int co, int dilation) {
        Tensor data = placeholder("data", FLOAT32, 1, h, w, ci);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, ci, co);
        return ComputeDAG.of(
                Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, dilation).withDilation(dilation, dilation)));
    }

    /** The conv's loops in the order given (i j k l rh rw rc), the channel loop vectorized, the pad at root. */
    private static Schedule ordered(ComputeDAG dag, String... order) {
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("conv2d_nhwc");
        c.reorder(order);
        c.vectorize("l");
        return s.build();
    }

    private static List<IfThenElse> ifs(PrimFunc f) {
        List<IfThenElse> out = new ArrayList<>();
        Stmts.forEachStmt(f.body(), x -> {
            if (x instanceof IfThenElse i) out.add(i);
        });
        return out;
    }

    @Test
    void theRowTapsAreGuardedAndTheColumnTapsLoopIsPeeledWithTheTileNarrowed() {
        // the tuned 14 x 14 layer's shape in small: rh and rw outside a tile of one row's pixels x the channels
        PrimFunc f = PassChecks.simplified(ordered(conv(6, 6, 8, 16, 1), "i", "j", "rh", "rw", "rc", "k", "l"));
        assertThat(ifs(f)).isEmpty();
        PrimFunc g = SkipPaddedTerms.apply(f);
        List<IfThenElse> guards = ifs(g);
        assertThat(guards).hasSize(1);
        String cond = guards.getFirst().cond().toString();
        assertThat(cond).contains("j").contains("rh").doesNotContain("rw").doesNotContain("k");
        // the column taps use rw and the tile's k (one vector of work under k: no branch there): rw is peeled, and
        // its three copies run k over 1..6, 0..6 and 0..5 (min..extent printed; the init's k loop first)
        assertThat(loops(g, "rw")).isEmpty();
        assertThat(loops(g, "k").stream().map(l -> l.min() + ".." + l.extent()).toList())
                .containsExactly("0..6", "1..5", "0..6", "0..5");
        assertSameResults(f, g);
    }

    /** The conv's loops named {@code name} (not the pad's, which has loops of the same names), in program order. */
    private static List<For> loops(PrimFunc f, String name) {
        List<For> out = new ArrayList<>();
        Stmts.forEachStmt(f.body(), x -> {
            if (x instanceof For l
                    && l.var().name().equals(name)
                    && Stmts.stored(l.body()).stream().noneMatch(b -> b.name().equals("pad"))) out.add(l);
        });
        return out;
    }

    @Test
    void aRowTileSplitInTwoIsPartitionedAtItsBordersThenTheColumnTapsArePeeled() {
        // the 2-thread 14 x 14 layer's shape in small: the row's 8 pixels as k.0 (2) x k.1 (4), so the column
        // conjunct k.0 * 4 + k.1 + rw uses three loops; k.0 is split at its borders (both of its values here),
        // then rw is peeled in each copy and the tile loop k.1 narrowed where a column tap falls in the padding
        ComputeDAG dag = conv(5, 8, 8, 16, 1);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("conv2d_nhwc");
        var k = c.split("k", 4);
        c.reorder(c.loop("i"), c.loop("j"), k.get(0), c.loop("rh"), c.loop("rw"), c.loop("rc"), k.get(1), c.loop("l"));
        c.vectorize("l");
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = SkipPaddedTerms.apply(f);
        assertThat(loops(g, "rw")).as("rw peeled in both copies of k.0").isEmpty();
        assertThat(loops(g, k.get(0).name()))
                .as("k.0 split into its two border values")
                .isEmpty();
        // the reduction's k.1 loops: k.0 = 0 with rw = 0, 1, 2 (the first pixel has no left tap), then k.0 = 1
        List<String> tile = loops(g, k.get(1).name()).stream()
                .filter(l ->
                        Stmts.stored(l.body()).stream().anyMatch(b -> b.name().equals("conv2d_nhwc")))
                .map(l -> l.min() + ".." + l.extent())
                .toList();
        assertThat(tile).contains("1..3", "0..3").hasSizeGreaterThanOrEqualTo(6);
        assertSameResults(f, g);

        // a split with an interior: 12 pixels as 3 x 4, k.0 = 1 keeps a loop of its own (no copy, no narrowing)
        ComputeDAG wide = conv(3, 12, 8, 16, 1);
        ScheduleBuilder s2 = ScheduleBuilder.on(wide);
        var c2 = s2.stage("conv2d_nhwc");
        var k2 = c2.split("k", 4);
        c2.reorder(
                c2.loop("i"),
                c2.loop("j"),
                k2.get(0),
                c2.loop("rh"),
                c2.loop("rw"),
                c2.loop("rc"),
                k2.get(1),
                c2.loop("l"));
        c2.vectorize("l");
        PrimFunc f2 = PassChecks.simplified(s2.build());
        PrimFunc g2 = SkipPaddedTerms.apply(f2);
        assertThat(loops(g2, k2.get(0).name()).stream()
                        .map(l -> l.min() + ".." + l.extent())
                        .toList())
                .as("the interior value of k.0 stays a loop")
                .contains("1..1");
        assertSameResults(f2, g2);
    }

    @Test
    void aLoopOfMoreIterationsThanMaxPeeledIsNotPeeled() {
        // a 1 x 9 window (9 > MAX_PEELED column taps) outside the row's tile: the taps loop stays one loop
        Tensor data = placeholder("data", FLOAT32, 1, 6, 12, 8);
        Tensor weight = placeholder("weight", FLOAT32, 1, 9, 8, 16);
        ComputeDAG dag = ComputeDAG.of(
                Conv.conv2dNhwc(data, weight, ConvParams.of(2, 1, 0).withPadding(0, 4)));
        PrimFunc f = PassChecks.simplified(ordered(dag, "i", "j", "rh", "rw", "rc", "k", "l"));
        PrimFunc g = SkipPaddedTerms.apply(f);
        assertThat(loops(g, "rw")).hasSize(1);
        assertThat(loops(g, "k").getFirst().extent().toString()).isEqualTo("12");
        assertSameResults(f, g);
    }

    @Test
    void bothPaddedDimensionsAreGuardedWhenBothReductionLoopsAreOutsideEnoughWork() {
        // k outside rh and rw: the column conjunct uses rw and k, both bound above rw's body of 32 channels
        PrimFunc f = PassChecks.simplified(ordered(conv(5, 7, 32, 16, 1), "i", "j", "k", "rh", "rw", "rc", "l"));
        PrimFunc g = SkipPaddedTerms.apply(f);
        List<String> conds = ifs(g).stream().map(i -> i.cond().toString()).toList();
        assertThat(conds).hasSize(2);
        assertThat(conds).anySatisfy(c -> assertThat(c).contains("rh").contains("j"));
        assertThat(conds).anySatisfy(c -> assertThat(c).contains("rw").contains("k"));
        assertSameResults(f, g);
    }

    @Test
    void aBodyTooSmallForABranchGetsNoGuard() {
        // rw's body is 6 channels: fewer than MIN_GUARDED_WORK updates per branch, so only rh (18) is guarded; the
        // column taps peel k (5 values) instead, each copy running rw over its valid taps
        PrimFunc f = PassChecks.simplified(ordered(conv(5, 5, 6, 16, 1), "i", "j", "k", "rh", "rw", "rc", "l"));
        PrimFunc g = SkipPaddedTerms.apply(f);
        assertThat(ifs(g))
                .hasSize(5) // the rh guard in each of k's copies
                .allSatisfy(i -> assertThat(i.cond().toString()).contains("rh").doesNotContain("rw"));
        assertThat(loops(g, "k")).isEmpty();
        assertThat(loops(g, "rw").stream().map(l -> l.min() + ".." + l.extent()).toList())
                .containsExactly("1..2", "0..3", "0..3", "0..3", "0..2");
        assertSameResults(f, g);
    }

    @Test
    void dilatedTapsAreGuardedAtTheirStride() {
        PrimFunc f = PassChecks.simplified(ordered(conv(7, 6, 8, 16, 2), "i", "j", "rh", "rw", "rc", "k", "l"));
        PrimFunc g = SkipPaddedTerms.apply(f);
        assertThat(ifs(g)).hasSize(1);
        assertThat(ifs(g).getFirst().cond().toString()).contains("rh * 2");
        assertSameResults(f, g);
    }

    @Test
    void aPadComputedInsideTheConvsRowLoopIsReadThroughItsOwnLoops() {
        // the pad's window of 3 rows is computed per output row j: its store index is its own loop, its condition
        // the row j plus that loop; read at rh
        ComputeDAG dag = conv(6, 6, 8, 16, 1);
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("conv2d_nhwc");
        c.reorder("i", "j", "rh", "rw", "rc", "k", "l");
        c.vectorize("l");
        s.stage("pad").computeAt(c, "j");
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = SkipPaddedTerms.apply(f);
        assertThat(ifs(g).stream().map(i -> i.cond().toString()))
                .anySatisfy(x -> assertThat(x).contains("j").contains("rh"));
        assertSameResults(f, g);
    }

    @Test
    void theSkippedTermsAreThePaddedOnesAWeightOfInfinityShows() {
        // weight tap rh = 0 infinite: output row 0 reads it only against the top padding (0 * inf = NaN) before the
        // pass, and skips it after; the other rows multiply it by data (infinite, or NaN from inf - inf) either way
        PrimFunc f = PassChecks.simplified(ordered(conv(5, 5, 8, 16, 1), "i", "j", "rh", "rw", "rc", "k", "l"));
        PrimFunc g = SkipPaddedTerms.apply(f);
        NDArray[] before = args(f), after = args(g);
        Interpreter.run(f, before);
        Interpreter.run(g, after);
        for (long k = 0; k < 5; k++) {
            for (long l = 0; l < 16; l++) {
                assertThat(before[2].getDouble(0, 0, k, l)).isNaN();
                assertThat(after[2].getDouble(0, 0, k, l)).isFinite();
            }
        }
    }

    private static NDArray[] args(PrimFunc f) {
        NDArray data = NDArray.allocate(f.params().get(0)).fillRandom(7);
        NDArray weight = NDArray.allocate(f.params().get(1)).fillRandom(8);
        for (long rw = 0; rw < 3; rw++)
            for (long rc = 0; rc < 8; rc++)
                for (long o = 0; o < 16; o++) weight.setDouble(Double.POSITIVE_INFINITY, 0, rw, rc, o);
        return new NDArray[] {data, weight, NDArray.allocate(f.params().get(2))};
    }

    @Test
    void padsOfOtherValuesAndOtherUpdatesAreLeftAlone() {
        // a pad of ones: its border is not zero, so no term may be skipped
        Tensor data = placeholder("data", FLOAT32, 1, 6, 6, 8);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, 8, 16);
        Tensor padded = Pad.pad(data, new long[] {0, 1, 1, 0}, new long[] {0, 1, 1, 0}, 1.0);
        IterVar rh = reduceAxis(3, "rh"), rw = reduceAxis(3, "rw"), rc = reduceAxis(8, "rc");
        Tensor out = compute(
                "conv2d_nhwc",
                shape(1, 6, 6, 16),
                (n, j, k, l) -> sum(
                        List.of(rh, rw, rc),
                        padded.at(n, j.add(rh), k.add(rw), rc).mul(weight.at(rh, rw, rc, l))));
        PrimFunc ones = PassChecks.simplified(ordered(ComputeDAG.of(out), "i", "j", "rh", "rw", "rc", "k", "l"));
        assertThat(SkipPaddedTerms.apply(ones)).isSameAs(ones);
        // a zero pad read by a plain copy, not by a sum: no update to skip
        Tensor zpad = Pad.pad(data, new long[] {0, 1, 1, 0}, new long[] {0, 1, 1, 0});
        Tensor copy = compute(
                "copy", shape(1, 8, 8, 8), (n, j, k, c) -> zpad.at(n, j, k, c).mul(2.0));
        PrimFunc plain = PassChecks.simplified(Schedule.empty(ComputeDAG.of(copy)));
        assertThat(SkipPaddedTerms.apply(plain)).isSameAs(plain);
    }

    @Test
    void onlyFastMathCpuPipelinesRunThePassAndTheirNumbersHold() {
        var exact = Target.cpu().withFastMath(false);
        var fast = Target.cpu().withFastMath(true);
        assertThat(Lowering.pipeline(exact).passes()).noneMatch(p -> p.name().equals("skip-padded-terms"));
        assertThat(Lowering.pipeline())
                .satisfies(p -> assertThat(p.passes()).noneMatch(x -> x.name().equals("skip-padded-terms")));
        assertThat(Lowering.pipeline(fast).passes()).anyMatch(p -> p.name().equals("skip-padded-terms"));
        Schedule sch = ordered(conv(6, 6, 8, 16, 1), "i", "j", "rh", "rw", "rc", "k", "l");
        PrimFunc loops = PassChecks.loops(sch);
        PrimFunc lowered = Lowering.pipeline(fast).run(loops, Lowering.Options.defaults());
        assertThat(ifs(lowered)).isNotEmpty();
        assertSameResults(loops, lowered);
    }
}
