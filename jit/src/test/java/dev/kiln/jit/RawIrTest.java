package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Hand-written IR through {@link RawIr}: it runs and computes what it says; bad IR is refused by name. */
class RawIrTest {
    @Test
    void compiledFunctionComputesAMultiplyAdd() throws Throwable {
        String ir = """
                define i64 @kiln_raw(i64 %a, i64 %b) {
                  %m = mul i64 %a, %b
                  %s = add i64 %m, 7
                  ret i64 %s
                }
                """;
        try (RawIr code = RawIr.compile(Target.cpu(), "raw smoke", ir, "kiln_raw")) {
            MethodHandle h = Linker.nativeLinker()
                    .downcallHandle(
                            MemorySegment.ofAddress(code.address()),
                            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
            SplittableRandom r = new SplittableRandom(3);
            for (int i = 0; i < 20; i++) {
                long a = r.nextInt(1 << 20), b = r.nextInt(1 << 20);
                assertThat((long) h.invokeExact(a, b)).isEqualTo(a * b + 7);
            }
            assertThat(code.assembly()).contains("kiln_raw");
        }
    }

    @Test
    void badIrNamesTheModule() {
        assertThatThrownBy(() -> RawIr.compile(Target.cpu(), "broken probe", "define i64 @f( {", "f"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("broken probe");
    }
}
