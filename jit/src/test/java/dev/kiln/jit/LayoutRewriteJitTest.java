package dev.kiln.jit;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Elementwise;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A conv2d whose weight was rewritten to the tiled layout, compiled through the LLVM backend,
 * against the interpreter running the original program on the original weight. Tolerance: rtol
 * and atol 1e-5 (float32; the compiled code may contract multiply-adds into FMAs, the
 * interpreter does not; sums of 3*3*16 terms of magnitude about 1).
 */
class LayoutRewriteJitTest {

    /** Ansor-style fused tiling of conv2d NHWC + bias + relu (the conv inside the relu's tiles). */
    static Schedule fusedTiling(ComputeDAG dag, int kTile, int lTile, int rcTile) {
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        sb.stage("pad").computeInline();
        sb.stage("bias_add").computeInline();
        var relu = sb.stage("relu");
        var conv = sb.stage("conv2d_nhwc");
        relu.split("k", kTile);
        relu.split("l", lTile);
        relu.reorder("i", "j", "k.0", "l.0", "k.1", "l.1");
        conv.computeAt(relu, "l.0");
        relu.parallel(relu.fuse("i", "j", "k.0"));
        relu.vectorize("l.1");
        conv.split("rc", rcTile);
        conv.reorder("i", "j", "rh", "rw", "rc.0", "rc.1", "k", "l");
        conv.vectorize("l");
        return sb.build();
    }

    @Test
    void rewrittenConvCompiledMatchesTheInterpreter() {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 12, 12, 16);
        Tensor w = Te.placeholder("W", FLOAT32, 3, 3, 16, 32);
        Tensor b = Te.placeholder("b", FLOAT32, 32);
        ComputeDAG dag = ComputeDAG.of(Activation.relu(Elementwise.biasAdd(Conv.conv2dNhwc(data, w, 1, 1), b, 3)));
        Schedule s = fusedTiling(dag, 4, 8, 4);
        LayoutRewrite.Result r = LayoutRewrite.rewrite(s, Set.of(w, b));
        assertThat(r.transform(w)).isPresent();
        assertThat(r.transform(w).get().newShape()).containsExactly(4, 3, 3, 4, 4, 8);

        List<NDArray> args = new ArrayList<>();
        args.add(NDArray.random(FLOAT32, 1, 1, 12, 12, 16));
        args.add(NDArray.random(FLOAT32, 2, 3, 3, 16, 32));
        args.add(NDArray.random(FLOAT32, 3, 32));
        args.add(NDArray.allocate(FLOAT32, 1, 12, 12, 32));
        Interpreter.run(Lowering.lower("reference", s), args.toArray(NDArray[]::new));
        NDArray expected = args.get(3);

        List<NDArray> packed = r.transformArguments(
                List.of(args.get(0), args.get(1), args.get(2), NDArray.allocate(FLOAT32, 1, 12, 12, 32)));
        try (CompiledKernel k =
                Backend.forTarget(Target.cpu()).compile(Lowering.lower("packed", r.schedule()), Target.cpu())) {
            k.call(packed.toArray(NDArray[]::new));
        }
        Comparison cmp = packed.get(3).compareTo(expected, 1e-5, 1e-5);
        assertThat(cmp.ok()).as(cmp.report()).isTrue();
        long positive = 0;
        for (float x : expected.toFloatArray()) if (x > 0) positive++;
        assertThat(positive).as("the relu output is not all zeros").isPositive();
    }
}
