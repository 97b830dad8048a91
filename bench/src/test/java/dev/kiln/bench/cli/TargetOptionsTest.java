package dev.kiln.bench.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --target}, {@code --threads} and {@code --fma} of tune, apply and inspect. */
class TargetOptionsTest {
    static Target parse(String... args) {
        TargetOptions o = new TargetOptions();
        new CommandLine(o).parseArgs(args);
        return o.target();
    }

    @Test
    void fmaMarksTheCpuTargetAsTheNetworkCommandsAndTheSuiteDo() {
        CpuTarget plain = (CpuTarget) parse("--threads", "2");
        CpuTarget fma = (CpuTarget) parse("--threads", "2", "--fma");
        assertThat(plain.fastMath()).isFalse();
        assertThat(fma.fastMath()).isTrue();
        // the key a log of ./kiln suite (FMA on by default) holds for 2 threads
        assertThat(fma.toString())
                .isEqualTo(Target.cpu().withCores(2).withFastMath(true).toString());
        assertThat(fma.cores()).isEqualTo(2);
    }

    @Test
    void fmaElsewhereIsRefusedNamingTheOption() {
        assertThatThrownBy(() -> parse("--target", "jvm", "--fma"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("--fma")
                .hasMessageContaining("jvm");
        assertThatThrownBy(() -> parse("--target", Target.cpu().toString(), "--fma"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("--fma")
                .hasMessageContaining("-fast-math=1");
        assertThat(KilnCliTest.run("inspect", "--op", "GMM", "--target", "cuda", "--fma")
                        .err())
                .contains("--fma");
    }
}
