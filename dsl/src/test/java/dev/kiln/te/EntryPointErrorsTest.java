package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Reducer;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every public entry point of the DSL fed bad input: it throws a {@link KilnException} (never a
 * raw NullPointerException, index or arithmetic exception) whose message names the tensor, axis or
 * argument at fault.
 */
class EntryPointErrorsTest {

    private static final Tensor A = Te.placeholder("A", FLOAT32, 4, 6);
    private static final IterVar K = Te.reduceAxis(6, "k");

    private static Arguments bad(String entry, Executable call, String... fragments) {
        return Arguments.of(entry, call, fragments);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                bad("shape(null)", () -> Te.shape((long[]) null), "shape", "null"),
                bad("shape(non-positive)", () -> Te.shape(3, 0), "axis 1", "non-positive"),
                bad("shape(over int32)", () -> Te.shape(3, 1L << 40), "axis 1", "int32"),
                bad("Shape(null extent)", () -> new Shape(Arrays.asList(3L, null)), "axis 1", "null"),
                bad(
                        "Shape.numElements overflow",
                        () -> Te.shape(1 << 30, 1 << 30, 1 << 30).numElements(),
                        "more elements"),
                bad("placeholder(null name)", () -> Te.placeholder(null, FLOAT32, 4), "placeholder", "name is null"),
                bad("placeholder(null dtype)", () -> Te.placeholder("X", null, 4), "placeholder 'X'", "dtype"),
                bad(
                        "placeholder(null shape)",
                        () -> Te.placeholder("X", FLOAT32, (Shape) null),
                        "placeholder 'X'",
                        "shape"),
                bad(
                        "placeholder(bad extent)",
                        () -> Te.placeholder("X", FLOAT32, 4, -1),
                        "placeholder 'X'",
                        "axis 1",
                        "-1"),
                bad(
                        "compute(null name)",
                        () -> Te.compute(null, Te.shape(4), i -> A.at(i, i)),
                        "compute",
                        "name is null"),
                bad("compute(null shape)", () -> Te.compute("C", null, i -> A.at(i, i)), "compute 'C'", "shape"),
                bad(
                        "compute(null lambda)",
                        () -> Te.compute("C", Te.shape(4), (dev.kiln.te.IndexFn.F1) null),
                        "compute 'C'",
                        "lambda is null"),
                bad(
                        "compute(lambda gives null)",
                        () -> Te.compute("C", Te.shape(4), i -> null),
                        "compute 'C'",
                        "returned null"),
                bad(
                        "compute(rank mismatch)",
                        () -> Te.compute("C", Te.shape(4, 6), i -> A.at(i, i)),
                        "compute 'C'",
                        "rank 2"),
                bad("computeN(null lambda)", () -> Te.computeN("C", Te.shape(4), null), "compute 'C'", "lambda"),
                bad(
                        "computeMulti(null output)",
                        () -> Te.computeMulti("C", Te.shape(4), ax -> Arrays.asList(A.at(ax.get(0), ax.get(0)), null)),
                        "compute 'C'",
                        "output 1"),
                bad("reduceAxis(null name)", () -> Te.reduceAxis(4, null), "reduceAxis", "null"),
                bad("reduceAxis(extent 0)", () -> Te.reduceAxis(0, "r"), "'r'", "non-positive"),
                bad("reduceAxis(over int32)", () -> Te.reduceAxis(Integer.MAX_VALUE, 10, "r"), "'r'", "int32"),
                bad("sum(null axis)", () -> Te.sum((IterVar) null, A.at(0, 0)), "reduce axis is null"),
                bad("sum(null body)", () -> Te.sum(K, null), "[k]", "body is null"),
                bad("max(null axis in list)", () -> Te.max(Arrays.asList(K, null), A.at(0, 0)), "reduce axis 1"),
                bad("reduce(null reducer)", () -> Te.reduce(null, List.of(K), A.at(0, 0), null), "reducer is null"),
                bad(
                        "sum(extent, null lambda)",
                        () -> Te.sum(4, (Function<IterVar, Expr>) null),
                        "'r'",
                        "lambda is null"),
                bad(
                        "Reducer.reduce(spatial axis)",
                        () -> Te.compute("C", Te.shape(4), i -> Reducer.sum(FLOAT32)
                                .reduce(A.at(i, Te.i32(0)), List.of(i), Te.bool(true))),
                        "axis 'i'",
                        "spatial"),
                bad("Tensor.at(null index)", () -> A.at(Te.i32(0), null), "tensor 'A'", "index 1", "null"),
                bad("Tensor.at(wrong rank)", () -> A.at(Te.i32(0)), "tensor 'A'", "rank 2"),
                bad("Tensor.at(constant out of range)", () -> A.at(0, 6), "tensor 'A'", "axis 1", "6"),
                bad("Tensor.at(float index)", () -> A.at(Te.f32(1), Te.i32(0)), "index 0 of tensor 'A'", "float32"),
                bad("ComputeDAG(null)", () -> new ComputeDAG(null), "ComputeDAG", "null"),
                bad("ComputeDAG(no outputs)", () -> ComputeDAG.of(), "at least one output"),
                bad(
                        "ComputeDAG(null output)",
                        () -> ComputeDAG.of(Te.compute("C", Te.shape(4), i -> A.at(i, i)), null),
                        "output 1",
                        "null"),
                bad("ComputeDAG(placeholder output)", () -> ComputeDAG.of(A), "'A'", "placeholder"),
                bad(
                        "ComputeDAG(output twice)",
                        () -> {
                            Tensor c = Te.compute("C", Te.shape(4), i -> A.at(i, i));
                            ComputeDAG.of(c, c);
                        },
                        "'C'",
                        "twice"),
                bad(
                        "ComputeDAG(flop count overflow)",
                        () -> {
                            Tensor big = Te.placeholder("Big", FLOAT32, 1 << 30, 1 << 30);
                            IterVar r = Te.reduceAxis(1 << 30, "r");
                            ComputeDAG.of(Te.compute(
                                    "Huge",
                                    Te.shape(1 << 30, 1 << 30),
                                    (i, j) -> Te.sum(r, big.at(i, r).mul(big.at(r, j)))));
                        },
                        "compute 'Huge'",
                        "overflows"),
                bad("binary(null operand)", () -> A.at(0, 0).mul((Expr) null), "'*'", "right operand", "A[0, 0]"),
                bad("compare(null operand)", () -> A.at(0, 0).lt((Expr) null), "right operand"),
                bad("select(null branch)", () -> Te.select(Te.bool(true), null, A.at(0, 0)), "select", "true branch"),
                bad("cast(null value)", () -> Te.cast(INT32, null), "cast to int32", "null"),
                bad("cast(null dtype)", () -> Te.cast(null, A.at(0, 0)), "cast of A[0, 0]", "dtype"),
                bad("exp(null)", () -> Te.exp(null), "exp", "argument 0"),
                bad("minimum(null)", () -> Te.minimum(A.at(0, 0), null), "'min'", "right operand"),
                bad("all(null condition)", () -> Te.all(Te.bool(true), null), "all", "condition 1"),
                bad("names(null)", () -> Te.names((String[]) null), "axis names", "null"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void badInputNamesTheCulprit(String entry, Executable call, String[] fragments) {
        KilnException e = assertThrows(KilnException.class, call, entry);
        assertThat(e.getMessage()).as(entry).contains(fragments);
    }
}
