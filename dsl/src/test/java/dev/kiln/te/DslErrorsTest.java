package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.FLOAT64;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad input throws a KilnException whose message names the tensor, axis or expression at fault. */
class DslErrorsTest {

    private static String message(Executable e) {
        return assertThrows(KilnException.class, e).getMessage();
    }

    @Test
    void rankMismatchNamesTheTensor() {
        Tensor a = placeholder("A", FLOAT32, 4, 5);
        String m = message(() -> compute("C", shape(4), i -> a.at(i)));
        assertThat(m).contains("'A'").contains("rank 2").contains("1 index");
    }

    @Test
    void reduceAxisOutsideItsReductionNamesTheAxis() {
        Tensor a = placeholder("A", FLOAT32, 4, 5);
        IterVar k = reduceAxis(5, "k");
        String m = message(() -> compute("C", shape(4), i -> a.at(i, k)));
        assertThat(m)
                .contains("reduce axis 'k'")
                .contains("outside its reduction")
                .contains("'C'");
    }

    @Test
    void axisOfAnotherComputeIsRejected() {
        Tensor a = placeholder("A", FLOAT32, 4);
        IterVar[] leaked = new IterVar[1];
        compute("B", shape(4), i -> {
            leaked[0] = i;
            return a.at(i);
        });
        String m = message(() -> compute("C", shape(4), j -> a.at(leaked[0])));
        assertThat(m).contains("axis 'i'").contains("another computation");
    }

    @Test
    void nonPositiveExtentIsRejected() {
        assertThat(message(() -> placeholder("A", FLOAT32, 4, 0)))
                .contains("non-positive")
                .contains("axis 1");
        assertThat(message(() -> reduceAxis(0, "k"))).contains("'k'").contains("non-positive");
        assertThat(message(() -> shape(3, -2))).contains("-2");
    }

    @Test
    void dtypeMismatchNamesBothOperands() {
        Tensor a = placeholder("A", FLOAT32, 4);
        Tensor b = placeholder("B", FLOAT64, 4);
        String m = message(() -> compute("C", shape(4), i -> a.at(i).add(b.at(i))));
        assertThat(m)
                .contains("A[i]")
                .contains("float32")
                .contains("B[i]")
                .contains("float64")
                .contains("cast");
    }

    @Test
    void integerTrueDivisionAsksForFloordivOrTruncdiv() {
        Tensor a = placeholder("A", INT32, 4);
        String m = message(() -> compute("C", shape(4), i -> a.at(i).div(2)));
        assertThat(m).contains("floordiv").contains("truncdiv");
    }

    @Test
    void fractionalLiteralForIntegerIsRejected() {
        Tensor a = placeholder("A", INT32, 4);
        assertThat(message(() -> a.at(0).mul(0.5))).contains("0.5").contains("int32");
    }

    @Test
    void floatIndexIsRejected() {
        Tensor a = placeholder("A", FLOAT32, 4);
        Tensor idx = placeholder("I", FLOAT32, 4);
        assertThat(message(() -> compute("C", shape(4), i -> a.at(idx.at(i)))))
                .contains("'A'")
                .contains("integers");
    }

    @Test
    void nestedReductionIsRejected() {
        Tensor a = placeholder("A", FLOAT32, 4, 5);
        IterVar k = reduceAxis(5, "k");
        String m = message(() -> compute("C", shape(4), i -> sum(k, a.at(i, k)).mul(2.0)));
        assertThat(m).contains("'C'").contains("whole body");
    }

    @Test
    void lambdaArityMustMatchShapeRank() {
        Tensor a = placeholder("A", FLOAT32, 4, 5);
        assertThat(message(() -> compute("C", shape(4, 5), i -> a.at(i, i))))
                .contains("rank 2")
                .contains("1 index");
    }

    @Test
    void reducingOverASpatialAxisIsRejected() {
        Tensor a = placeholder("A", FLOAT32, 4);
        assertThat(message(() -> compute("C", shape(4), i -> sum(i, a.at(i)))))
                .contains("'i'")
                .contains("spatial");
    }

    @Test
    void boolArithmeticAndNonBoolConditionsAreRejected() {
        Tensor a = placeholder("A", FLOAT32, 4);
        assertThat(message(() -> a.at(0).lt(1.0).add(a.at(1).lt(1.0)))).contains("bool");
        assertThat(message(() -> Te.select(a.at(0), a.at(1), a.at(2))))
                .contains("select condition")
                .contains("A[0]");
    }

    @Test
    void intrinsicOnIntegerAsksForACast() {
        Tensor a = placeholder("A", INT32, 4);
        assertThat(message(() -> Te.exp(a.at(0))))
                .contains("exp")
                .contains("A[0]")
                .contains("cast");
    }

    @Test
    void literalOutOfRangeIsRejected() {
        Tensor a = placeholder("A", dev.kiln.ir.DType.INT8, 4);
        assertThat(message(() -> a.at(0).add(300))).contains("300").contains("int8");
    }
}
