package dev.kiln.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.target.Target;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.junit.jupiter.api.Test;

class OrcJitSmokeTest {
    @Test
    void addsAndCalls() throws Throwable {
        String ir = """
                define i32 @kiln_smoke(i32 %a, i32 %b) {
                  %s = add i32 %a, %b
                  %e = call float @expf(float 1.0)
                  ret i32 %s
                }
                declare float @expf(float)
                """;
        try (OrcJit jit = new OrcJit(Target.cpu())) {
            long t0 = System.nanoTime();
            JitModule m = jit.add("smoke", ir, List.of("kiln_smoke"), true);
            System.out.println("compile ms " + (System.nanoTime() - t0) / 1e6 + " " + m.times());
            MethodHandle h = Linker.nativeLinker()
                    .downcallHandle(
                            MemorySegment.ofAddress(m.address("kiln_smoke")),
                            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            assertEquals(7, (int) h.invokeExact(3, 4));
            String asm = jit.assembly("smoke", m.optimizedIr());
            assertTrue(asm.contains("kiln_smoke"), asm);
            System.out.println(Target.cpu() + "\n" + Llvm.hostCpuName() + "\n" + Llvm.hostCpuFeatures());
            m.close();
        }
    }
}
