package dev.kiln.schedule.layout;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.schedule.layout.LayoutRewriteTesting.check;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Elementwise;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LayoutRewriteTest {

    @Test
    void conv3x3RootTiled() {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 8, 8, 8);
        Tensor w = Te.placeholder("W", FLOAT32, 3, 3, 8, 16);
        Tensor b = Te.placeholder("b", FLOAT32, 16);
        Tensor out = Activation.relu(Elementwise.biasAdd(Conv.conv2dNhwc(data, w, 1, 1), b, 3));
        ComputeDAG dag = ComputeDAG.of(out);
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        var conv = sb.stage("conv2d_nhwc");
        conv.split("l", 4);
        conv.split("rc", 4);
        conv.reorder("i", "j", "l.0", "rh", "rw", "rc.0", "k", "rc.1", "l.1");
        Schedule s = sb.build();
        LayoutRewrite.Result r = check(s, Set.of(w, b), 1);
        System.out.println(r.transforms() + " " + r.skipped());
        System.out.println(r.schedule().lower("f"));
    }
}
