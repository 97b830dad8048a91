package dev.kiln.cuda;

import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.shape;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.codegen.CudaOptions;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every data type through every operation, intrinsic and conversion the code generator has a
 * form for, under the simple GPU schedule: the interpreter runs each program to the default
 * lowering's numbers (rtol = atol = 1e-6: the schedule does not change the order of anything),
 * and nvcc compiles every module for sm_90, with exact and with fast math.
 */
class DtypeCoverageTest {
    private static final DType[] ALL = DType.values();

    /** For a float type: arithmetic, min/max, comparisons, select, every intrinsic, casts to every type and back. */
    static ComputeDAG floatProgram(DType t) {
        Tensor x = placeholder("x", t, 3, 5), y = placeholder("y", t, 3, 5);
        Tensor out = compute("f_" + t, shape(3, 5), (i, j) -> {
            Expr a = x.at(i, j), b = y.at(i, j);
            Expr pos = Te.abs(a).add(0.5);
            Expr e = a.add(b).mul(a.sub(b)).div(pos).min(b).max(a.neg());
            e = e.add(Te.exp(a))
                    .add(Te.log(pos))
                    .add(Te.sqrt(pos))
                    .add(Te.rsqrt(pos))
                    .add(Te.tanh(b))
                    .add(Te.sigmoid(a))
                    .add(Te.erf(b))
                    .add(Te.pow(pos, b))
                    .add(Te.floor(a.mul(3)))
                    .add(Te.ceil(b.mul(3)))
                    .add(Te.round(a.mul(5)))
                    .add(Te.fma(a, b, pos));
            e = Te.select(a.lt(b).and(a.ne(0.25)).or(b.ge(0.5).not()), e, e.mul(2));
            for (DType to : ALL) if (to != t) e = e.add(a.mul(7).cast(to).cast(t));
            return e;
        });
        return ComputeDAG.of(out);
    }

    /** For an integer type: wrapping arithmetic, the four divisions by data and by constants, min/max, abs, casts. */
    static ComputeDAG intProgram(DType t) {
        Tensor x = placeholder("x", t, 4, 3), y = placeholder("y", t, 4, 3);
        Tensor out = compute("i_" + t, shape(4, 3), (i, j) -> {
            Expr a = x.at(i, j), b = y.at(i, j);
            Expr nz = Te.select(b.eq(0), dev.kiln.ir.Literals.like(b, 3), b);
            Expr e = a.add(b).mul(a.sub(b)).add(a.mul(a).mul(a));
            e = e.add(a.floordiv(nz)).add(a.floormod(nz)).add(a.truncdiv(nz)).add(a.truncmod(nz));
            e = e.add(a.floordiv(3))
                    .add(a.floormod(3))
                    .add(a.truncdiv(t.isUnsigned() ? 2 : -2))
                    .add(a.truncmod(5));
            e = e.add(a.min(b)).add(a.max(b)).add(Te.abs(a));
            e = Te.select(a.gt(b).or(a.le(1)), e, e.sub(1));
            for (DType to : ALL) if (to != t) e = e.add(a.cast(to).cast(t));
            e = e.add(a.cast(DType.FLOAT32).mul(Te.f32(2.75)).cast(t));
            return e;
        });
        return ComputeDAG.of(out);
    }

    static List<ComputeDAG> programs() {
        List<ComputeDAG> out = new ArrayList<>();
        for (DType t : ALL) {
            if (t.isFloat()) out.add(floatProgram(t));
            else if (t.isInt()) out.add(intProgram(t));
        }
        return out;
    }

    @Test
    void interpreterRunsEveryTypeToTheReference() {
        List<String> failures = new ArrayList<>();
        long seed = 7;
        for (ComputeDAG dag : programs()) {
            PrimFunc f = GpuTesting.lower("p", SimpleGpuSchedule.of(dag, 8));
            String diff = GpuTesting.compareWithDefault(dag, f, seed++, 1e-6);
            if (diff != null) failures.add(dag.outputs().getFirst().name() + ": " + diff);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void everyTypeCompilesWithNvcc() {
        GpuTesting.assumeNvcc();
        List<CudaModule> modules = new ArrayList<>();
        for (ComputeDAG dag : programs()) {
            String name = dag.outputs().getFirst().name();
            PrimFunc f = GpuTesting.lower(name, SimpleGpuSchedule.of(dag, 8));
            modules.add(CudaCodegen.generate(f));
            modules.add(CudaCodegen.generate(
                    new PrimFunc(name + "_fast", f.params(), f.body()),
                    CudaOptions.defaults().withFastMath(true)));
        }
        String all = String.join("\n", modules.stream().map(CudaModule::source).toList());
        assertThat(all)
                .contains("kiln_floordiv_i64(")
                .contains("kiln_floormod_i32(")
                .contains("kiln_f2u8(")
                .contains("kiln_abs_i64(")
                .contains("__ll2half_rn(")
                .contains("__double2bfloat16(")
                .contains("__expf(")
                .contains("erf(");
        assertThat(GpuTesting.compileWithNvcc(modules)).hasSize(2);
    }
}
