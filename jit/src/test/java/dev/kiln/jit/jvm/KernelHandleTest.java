package dev.kiln.jit.jvm;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.Target;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kernel handle: argument checks, the compile cache, the source, the target and the SPI. */
class KernelHandleTest {
    private static PrimFunc scale(String name) {
        Var i = new Var("i"), j = new Var("j");
        Buffer x = buf("x", DType.FLOAT32, 3, 5), y = buf("y", DType.FLOAT32, 3, 5);
        return new PrimFunc(
                name,
                List.of(x, y),
                loop(
                        i,
                        3,
                        ForKind.SERIAL,
                        loop(j, 5, ForKind.VECTORIZED, store(y, load(x, i, j).mul(2.5), i, j))));
    }

    @Test
    void everyWrongArgumentIsRefusedNamingTheParameter() {
        JvmKernel k = JvmCheck.BACKEND.compile(scale("scale"), JvmCheck.TARGET);
        try (NDArray x = NDArray.random(DType.FLOAT32, 1, 3, 5);
                NDArray y = NDArray.allocate(DType.FLOAT32, 3, 5);
                NDArray wrongType = NDArray.allocate(DType.FLOAT64, 3, 5);
                NDArray wrongShape = NDArray.allocate(DType.FLOAT32, 5, 3);
                NDArray strided = NDArray.allocateStrided(DType.FLOAT32, new long[] {3, 5}, new long[] {8, 1})) {
            assertThatThrownBy(() -> k.call(x))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("takes 2 argument(s) [x, y], got 1");
            assertThatThrownBy(() -> k.call(x, null)).hasMessageContaining("argument 1 (parameter 'y') is null");
            assertThatThrownBy(() -> k.call(x, wrongType))
                    .hasMessageContaining("parameter 'y') has dtype float64, expected float32");
            assertThatThrownBy(() -> k.call(wrongShape, y))
                    .hasMessageContaining("parameter 'x') has shape [5, 3], expected [3, 5]");
            assertThatThrownBy(() -> k.call(strided, y)).hasMessageContaining("parameter 'x') has strides [8, 1]");
            assertThatThrownBy(() -> k.call(x, x)).hasMessageContaining("overlaps argument 0 (parameter 'x')");
            k.call(x, y);
            assertThat(y.getDouble(2, 4)).isEqualTo((double) (float) (x.getDouble(2, 4) * 2.5));
            NDArray closed = NDArray.allocate(DType.FLOAT32, 3, 5);
            closed.close();
            assertThatThrownBy(() -> k.call(x, closed)).hasMessageContaining("parameter 'y') is closed");
            k.close();
            assertThatThrownBy(() -> k.call(x, y)).hasMessageContaining("kernel 'scale' is closed");
        }
    }

    @Test
    void equalProgramsCompileOnce() {
        long before = JvmBackend.compileCount();
        JvmKernel a = JvmCheck.BACKEND.compile(scale("cached"), JvmCheck.TARGET);
        JvmKernel b = JvmCheck.BACKEND.compile(scale("cached"), JvmCheck.TARGET); // a separately built, equal program
        assertThat(JvmBackend.compileCount() - before).isEqualTo(1);
        assertThat(a.classFile()).isEqualTo(b.classFile());
        JvmCheck.BACKEND.compile(scale("cached"), JvmTarget.jvm(1)); // another target compiles again
        assertThat(JvmBackend.compileCount() - before).isEqualTo(2);
    }

    @Test
    void theSourceIsTheTextifiedClassWithItsVectorCode() {
        String src = JvmCheck.BACKEND.compile(scale("src"), JvmCheck.TARGET).source();
        assertThat(src)
                .startsWith("// JVM bytecode of 'src' for cpu -mtriple=jvm")
                .contains("implements dev/kiln/jit/jvm/KernelEntry")
                .contains("INVOKESTATIC jdk/incubator/vector/FloatVector.fromMemorySegment")
                .contains("intoMemorySegment");
    }

    @Test
    void theJvmTargetIsFoundThroughTheServiceLoaderAndParsesBack() {
        Target t = JvmTarget.jvm();
        assertThat(Target.parse(t.toString())).isEqualTo(t);
        assertThat(Backend.forTarget(t)).isInstanceOf(JvmBackend.class);
        assertThat(new JvmBackend().supports(Target.cpu())).isFalse();
        assertThatThrownBy(() -> new JvmBackend().compile(scale("x"), Target.cpu()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("compiles for JVM targets");
    }
}
