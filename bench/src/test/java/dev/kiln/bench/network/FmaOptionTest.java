package dev.kiln.bench.network;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.bench.onnx.OnnxBench;
import dev.kiln.bench.suite.OperatorSuite;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --fma/--no-fma}: one mixin ({@link FmaOption}) in network-bench (so the main job), onnx, suite, lowp. */
class FmaOptionTest {
    static boolean fmaAfter(Callable<Integer> command, String... args) {
        CommandLine cl = new CommandLine(command);
        cl.parseArgs(args);
        return cl.getCommandSpec().findOption("--fma").getValue();
    }

    @Test
    void everyCommandDefaultsToContractionAndParsesNoFma() {
        assertThat(fmaAfter(new NetworkBench())).isTrue();
        assertThat(fmaAfter(new NetworkBench(), "--no-fma")).isFalse();
        assertThat(fmaAfter(new OnnxBench(), "model.onnx")).isTrue();
        assertThat(fmaAfter(new OnnxBench(), "model.onnx", "--no-fma")).isFalse();
        assertThat(fmaAfter(new OperatorSuite())).isTrue();
        assertThat(fmaAfter(new OperatorSuite(), "--no-fma")).isFalse();
        for (Callable<Integer> c :
                List.<Callable<Integer>>of(new NetworkBench(), new OnnxBench(), new OperatorSuite())) {
            assertThat(new CommandLine(c).getUsageMessage()).contains("--[no-]fma");
        }
    }

    @Test
    void theLlvmTargetGetsContractionAndItsKeyChangesTheJvmTargetIsLeftAlone() {
        FmaOption on = new FmaOption();
        CpuTarget cpu = Target.cpu().withCores(2);
        CpuTarget contracted = on.apply(cpu);
        assertThat(contracted.fastMath()).isTrue();
        assertThat(contracted.toString()).contains("-fast-math=1").isNotEqualTo(cpu.toString());
        assertThat(on.arg()).isEqualTo("--fma");

        FmaOption off = new FmaOption();
        new CommandLine(off).parseArgs("--no-fma");
        assertThat(off.apply(cpu.withFastMath(true)).fastMath()).isFalse();
        assertThat(off.arg()).isEqualTo("--no-fma");

        CpuTarget jvm = Target.jvm().withCores(2);
        assertThat(on.apply(jvm)).isEqualTo(jvm);
    }
}
