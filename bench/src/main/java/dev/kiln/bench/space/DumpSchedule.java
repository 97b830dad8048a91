package dev.kiln.bench.space;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the loop nest and assembly of a GEMM schedule given as a JSON step array:
 * {@code DumpSchedule n steps.json out-prefix}.
 */
public final class DumpSchedule {
    private DumpSchedule() {}

    public static void main(String[] args) throws Exception {
        ComputeDAG dag = GemmStudy.gemm(Integer.parseInt(args[0]));
        Schedule s = Schedule.fromSteps(new ObjectMapper().readTree(Files.readString(Path.of(args[1]))), dag);
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        var func = Lowering.lower("gemm", s);
        try (CompiledKernel k = Backend.forTarget(target).compile(func, target)) {
            Files.writeString(Path.of(args[2] + ".tir"), func.toString());
            Files.writeString(Path.of(args[2] + ".s"), k.source());
            Files.writeString(Path.of(args[2] + ".java"), s.toJavaSource());
        }
    }
}
