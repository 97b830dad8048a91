package dev.kiln.bench.network;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.bench.onnx.OnnxBench;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --transfer/--no-transfer}: one mixin ({@link TransferOption}) in both network tuning commands. */
class NetworkBenchTransferOptionTest {
    /** The value of {@code --transfer} after parsing {@code args}. */
    static boolean transferAfter(Callable<Integer> command, String... args) {
        CommandLine cl = new CommandLine(command);
        cl.parseArgs(args);
        return cl.getCommandSpec().findOption("--transfer").getValue();
    }

    @Test
    void bothCommandsDefaultToTransferAndParseNoTransfer() {
        assertThat(transferAfter(new NetworkBench())).isTrue();
        assertThat(transferAfter(new NetworkBench(), "--no-transfer")).isFalse();
        assertThat(transferAfter(new NetworkBench(), "--transfer")).isTrue();
        assertThat(transferAfter(new OnnxBench(), "model.onnx")).isTrue();
        assertThat(transferAfter(new OnnxBench(), "model.onnx", "--no-transfer"))
                .isFalse();
        assertThat(transferAfter(new OnnxBench(), "model.onnx", "--transfer")).isTrue();
    }

    @Test
    void bothHelpsShowTheOptionAndChildrenGetTheChoice() {
        for (Callable<Integer> c : List.<Callable<Integer>>of(new NetworkBench(), new OnnxBench())) {
            assertThat(new CommandLine(c).getUsageMessage())
                    .contains("--[no-]transfer")
                    .contains("Schedule transfer between similar tasks");
        }
        TransferOption o = new TransferOption();
        assertThat(o.arg()).isEqualTo("--transfer");
        new CommandLine(o).parseArgs("--no-transfer");
        assertThat(o.enabled()).isFalse();
        assertThat(o.arg()).isEqualTo("--no-transfer");
    }
}
