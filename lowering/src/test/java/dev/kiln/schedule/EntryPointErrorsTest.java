package dev.kiln.schedule;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The schedule API, Schedule.fromJson, NDArray, Interpreter.run and LowerDefault.lower fed bad
 * input: each throws a {@link KilnException} (never a raw NullPointerException, index or
 * arithmetic exception) whose message names the stage, loop, step, array or argument at fault.
 */
class EntryPointErrorsTest {

    private static final ComputeDAG DAG = Workloads.matmulRelu(16, 24, 8);

    private static ScheduleBuilder.StageRef c() {
        return ScheduleBuilder.on(DAG).stage("C");
    }

    private static Arguments bad(String entry, Executable call, String... fragments) {
        return Arguments.of(entry, call, fragments);
    }

    /** A valid schedule's JSON with its step list replaced. */
    private static String withSteps(String steps) {
        String json = Schedule.empty(DAG).toJson();
        return json.replace("\"steps\":[]", "\"steps\":" + steps);
    }

    static Stream<Arguments> scheduleCases() {
        return Stream.of(
                bad("on(null)", () -> ScheduleBuilder.on(null), "ScheduleBuilder.on", "DAG is null"),
                bad("stage(unknown)", () -> ScheduleBuilder.on(DAG).stage("Z"), "'Z'", "[A, B, C, D]"),
                bad("stage(null name)", () -> ScheduleBuilder.on(DAG).stage((String) null), "stage name is null"),
                bad("stage(null tensor)", () -> ScheduleBuilder.on(DAG).stage((Tensor) null), "tensor is null"),
                bad("split(unknown loop)", () -> c().split("q", 4), "stage 'C'", "no loop named 'q'", "[i, j, k]"),
                bad("split(null loop)", () -> c().split((String) null, 4), "stage 'C'", "loop name is null"),
                bad(
                        "split(null factors)",
                        () -> c().split("i", (Integer[]) null),
                        "stage 'C'",
                        "split of 'i'",
                        "factors"),
                bad("split(zero)", () -> c().split("i", 0), "step 0 split(C, i, [0])", "split by 0"),
                bad("split(no factors)", () -> c().split("i"), "split", "at least one length"),
                bad(
                        "split(overflowing product)",
                        () -> c().split("i", 1 << 30, 1 << 30, 1 << 30),
                        "split(C, i",
                        "malformed step"),
                bad("splitParts(negative)", () -> c().splitParts("j", -2), "split(C, j", "-2"),
                bad("followSplit(no such step)", () -> c().followSplit("i", 5, 1), "follow_split(C, i, step 5"),
                bad(
                        "followFusedSplit(null steps)",
                        () -> c().followFusedSplit("i", null, 1, true),
                        "stage 'C'",
                        "source steps"),
                bad("fuse(null)", () -> c().fuse((String[]) null), "stage 'C'", "fuse", "loops are null"),
                bad("fuse(not adjacent)", () -> c().fuse("i", "k"), "fuse(C, [0, 2])", "not adjacent"),
                bad(
                        "fuse(loop of another stage)",
                        () -> {
                            var s = ScheduleBuilder.on(DAG);
                            var d = s.stage("D");
                            s.stage("C").fuse(d.loop("i"), d.loop("j"));
                        },
                        "stage 'C'",
                        "belongs to stage 'D'"),
                bad("reorder(missing loop)", () -> c().reorder("i", "j"), "reorder(C"),
                bad("reorder(null)", () -> c().reorder((String[]) null), "stage 'C'", "reorder"),
                bad(
                        "computeAt(null target)",
                        () -> c().computeAt((ScheduleBuilder.StageRef) null, "i"),
                        "stage 'C'",
                        "compute_at",
                        "target"),
                bad("computeAt(unknown stage)", () -> c().computeAt("Q", "i"), "'Q'"),
                bad("computeAt(unknown loop)", () -> c().computeAt("D", "zz"), "stage 'D'", "'zz'"),
                bad("computeInline(reduction)", () -> c().computeInline(), "compute_inline(C)", "reduction"),
                bad("cacheWrite(null scope)", () -> c().cacheWrite(null), "stage 'C'", "cache_write", "scope is null"),
                bad("cacheWrite(bad scope)", () -> c().cacheWrite("attic"), "cache_write", "attic"),
                bad(
                        "cacheRead(null readers)",
                        () -> ScheduleBuilder.on(DAG).stage("A").cacheRead("local", (String[]) null),
                        "stage 'A'",
                        "cache_read",
                        "readers"),
                bad(
                        "cacheRead(unknown reader)",
                        () -> ScheduleBuilder.on(DAG).stage("A").cacheRead("local", "Q"),
                        "'Q'"),
                bad("rfactor(spatial loop)", () -> c().rfactor("i", 0), "rfactor(C, i"),
                bad("annotate(null)", () -> c().annotate("i", null), "stage 'C'", "annotation is null"),
                bad(
                        "vectorize(placeholder)",
                        () -> ScheduleBuilder.on(DAG).stage("A").vectorize("i"),
                        "'A'",
                        "placeholder"),
                bad("bind(unknown axis)", () -> c().bind("i", "warpIdx.q"), "stage 'C'", "bind 'i'", "warpIdx.q"),
                bad("bind(null axis)", () -> c().bind("i", null), "stage 'C'", "thread axis is null"),
                bad("pragma(unknown)", () -> c().pragma("i", "fast"), "pragma", "'fast'"),
                bad("pragma(null)", () -> c().pragma("i", null), "stage 'C'", "pragma is null"),
                bad("storageAlign(bad dim)", () -> c().storageAlign(7, 16, 1), "C"),
                bad("Schedule(null DAG)", () -> new Schedule(null, List.of()), "DAG", "null"),
                bad("Schedule(null step)", () -> new Schedule(DAG, Arrays.asList((Step) null)), "step 0", "null"),
                bad("append(null)", () -> Schedule.empty(DAG).append(null), "step 0", "null"),
                bad("lower(null name)", () -> Lowering.lower(null, Schedule.empty(DAG)), "lower", "name is null"),
                bad("fromJson(null)", () -> Schedule.fromJson(null, DAG), "fromJson", "null"),
                bad("fromJson(null DAG)", () -> Schedule.fromJson(withSteps("[]"), null), "fromJson", "DAG is null"),
                bad("fromJson(not JSON)", () -> Schedule.fromJson("{oops", DAG), "not a schedule"),
                bad(
                        "fromJson(stage out of range)",
                        () -> Schedule.fromJson(withSteps("[[\"SP\",9,0,16,[4],1]]"), DAG),
                        "step 0",
                        "no stage 9",
                        "4 stages"),
                bad(
                        "fromJson(loop out of range)",
                        () -> Schedule.fromJson(withSteps("[[\"AN\",2,5,1]]"), DAG),
                        "step 0",
                        "stage 'C' has 3 loops",
                        "no loop 5"),
                bad(
                        "fromJson(later step out of range)",
                        () -> Schedule.fromJson(withSteps("[[\"SP\",2,0,16,[4],1],[\"RE\",2,[0,1,2,3,9]]]"), DAG),
                        "step 1",
                        "reorder(C"),
                bad(
                        "fromJson(compute_at target out of range)",
                        () -> Schedule.fromJson(withSteps("[[\"CA\",2,7,0]]"), DAG),
                        "step 0",
                        "7"),
                bad(
                        "fromJson(malformed record)",
                        () -> Schedule.fromJson(withSteps("[[\"SP\",2,0]]"), DAG),
                        "step 0",
                        "SP"),
                bad(
                        "fromJson(unknown kind)",
                        () -> Schedule.fromJson(withSteps("[[\"XX\",2]]"), DAG),
                        "step 0",
                        "'XX'"));
    }

    static Stream<Arguments> runtimeCases() {
        Tensor a = Te.placeholder("A", FLOAT32, 4);
        Tensor b = Te.compute("B", Te.shape(4), i -> a.at(i).mul(2.0));
        PrimFunc f = LowerDefault.lower("twice", ComputeDAG.of(b));
        NDArray closed = NDArray.allocate(FLOAT32, 2);
        closed.close();
        NDArray closed4 = NDArray.allocate(FLOAT32, 4);
        closed4.close();
        return Stream.of(
                bad(
                        "allocate(null shape)",
                        () -> NDArray.allocate(FLOAT32, (long[]) null),
                        "allocate",
                        "shape is null"),
                bad("allocate(null dtype)", () -> NDArray.allocate(null, 2), "dtype"),
                bad("allocate(negative)", () -> NDArray.allocate(FLOAT32, 2, -3), "[2, -3]", "dimension 1"),
                bad(
                        "allocate(overflow)",
                        () -> NDArray.allocate(FLOAT32, 1L << 40, 1L << 40),
                        "more elements than a long"),
                bad(
                        "allocateStrided(rank mismatch)",
                        () -> NDArray.allocateStrided(FLOAT32, new long[] {2, 2}, new long[] {1}),
                        "differ in rank"),
                bad(
                        "allocateStrided(null strides)",
                        () -> NDArray.allocateStrided(FLOAT32, new long[] {2}, null),
                        "strides are null"),
                bad(
                        "allocateStrided(byte overflow)",
                        () -> NDArray.allocateStrided(FLOAT32, new long[] {2, 2}, new long[] {Long.MAX_VALUE / 2, 1}),
                        "float32[2, 2]",
                        "more bytes"),
                bad(
                        "wrap(null segment)",
                        () -> NDArray.wrap(null, FLOAT32, new long[] {2}, new long[] {1}),
                        "wrap",
                        "segment is null"),
                bad("fromFloats(null)", () -> NDArray.fromFloats(null, 2), "fromFloats", "null"),
                bad("fromFloats(wrong length)", () -> NDArray.fromFloats(new float[3], 2, 2), "3 values", "[2, 2]"),
                bad("fromDoubles(null)", () -> NDArray.fromDoubles(FLOAT32, null, 2), "fromDoubles", "null"),
                bad("fromInts(null)", () -> NDArray.fromInts(null, 2), "fromInts", "null"),
                bad("fromLongs(null)", () -> NDArray.fromLongs(null, 2), "fromLongs", "null"),
                bad("fromBytes(null)", () -> NDArray.fromBytes(DType.INT8, null, 2), "fromBytes", "null"),
                bad("fromBytes(float)", () -> NDArray.fromBytes(FLOAT32, new byte[2], 2), "fromBytes", "float32"),
                bad("random(null dtype)", () -> NDArray.random(null, 1, 2), "random", "dtype"),
                bad(
                        "getDouble(null index)",
                        () -> NDArray.allocate(FLOAT32, 2).getDouble((long[]) null),
                        "float32[2]",
                        "index is null"),
                bad(
                        "getDouble(out of bounds)",
                        () -> NDArray.allocate(FLOAT32, 2, 3).getDouble(1, 3),
                        "dimension 1",
                        "[0, 3)"),
                bad("setLong(wrong rank)", () -> NDArray.allocate(FLOAT32, 2, 3).setLong(1, 0), "rank 2"),
                bad(
                        "getDoubleFlat(out of bounds)",
                        () -> NDArray.allocate(FLOAT32, 2).getDoubleFlat(2),
                        "flat index 2",
                        "2 elements"),
                bad("unravel(out of bounds)", () -> NDArray.allocate(FLOAT32, 2).unravel(-1), "flat index -1"),
                bad("access after close", () -> closed.getDouble(0), "float32[2]", "closed"),
                bad("toFloatArray after close", () -> closed.toFloatArray(), "closed"),
                bad("copyFrom(null)", () -> NDArray.allocate(FLOAT32, 2).copyFrom(null), "source array is null"),
                bad(
                        "copyFrom(other shape)",
                        () -> NDArray.allocate(FLOAT32, 2).copyFrom(NDArray.allocate(FLOAT32, 3)),
                        "shapes differ"),
                bad(
                        "compareTo(null)",
                        () -> NDArray.allocate(FLOAT32, 2).compareTo(null, 0, 0),
                        "expected array is null"),
                bad(
                        "compareTo(negative tolerance)",
                        () -> NDArray.allocate(FLOAT32, 2).compareTo(NDArray.allocate(FLOAT32, 2), -1, 0),
                        "rtol -1"),
                bad("rowMajorStrides(null)", () -> NDArray.rowMajorStrides((long[]) null), "rowMajorStrides", "null"),
                bad(
                        "Interpreter.run(null function)",
                        () -> Interpreter.run(null, NDArray.allocate(FLOAT32, 4)),
                        "Interpreter",
                        "function is null"),
                bad(
                        "Interpreter.run(too few)",
                        () -> Interpreter.run(f, NDArray.allocate(FLOAT32, 4)),
                        "'twice'",
                        "2 argument(s)",
                        "[A, B]"),
                bad(
                        "Interpreter.run(null array)",
                        () -> Interpreter.run(f, NDArray.allocate(FLOAT32, 4), null),
                        "'twice'",
                        "parameter 1 'B'",
                        "null"),
                bad(
                        "Interpreter.run(wrong shape)",
                        () -> Interpreter.run(f, NDArray.allocate(FLOAT32, 4), NDArray.allocate(FLOAT32, 5)),
                        "parameter 1 'B'",
                        "[4]",
                        "[5]"),
                bad(
                        "Interpreter.run(wrong dtype)",
                        () -> Interpreter.run(f, NDArray.allocate(DType.FLOAT64, 4), NDArray.allocate(FLOAT32, 4)),
                        "parameter 0 'A'",
                        "float32",
                        "float64"),
                bad(
                        "Interpreter.run(closed array)",
                        () -> Interpreter.run(f, closed4, NDArray.allocate(FLOAT32, 4)),
                        "closed"),
                bad(
                        "LowerDefault.lower(null name)",
                        () -> LowerDefault.lower(null, ComputeDAG.of(b)),
                        "lower",
                        "name is null"),
                bad(
                        "LowerDefault.lower(null DAG)",
                        () -> LowerDefault.lower("f", (ComputeDAG) null),
                        "function 'f'",
                        "DAG is null"),
                bad(
                        "LowerDefault.lower(null args)",
                        () -> LowerDefault.lower("f", (List<Tensor>) null),
                        "function 'f'",
                        "argument list"),
                bad(
                        "LowerDefault.lower(null arg)",
                        () -> LowerDefault.lower("f", Arrays.asList(a, null)),
                        "function 'f'",
                        "argument 1"),
                bad(
                        "LowerDefault.lower(missing input)",
                        () -> LowerDefault.lower("f", List.of(b)),
                        "function 'f'",
                        "placeholder 'A'"),
                bad(
                        "LowerDefault.lower(listed twice)",
                        () -> LowerDefault.lower("f", List.of(a, b, b)),
                        "function 'f'",
                        "twice"),
                bad(
                        "LowerDefault.lower(no compute)",
                        () -> LowerDefault.lower("f", List.of(a)),
                        "function 'f'",
                        "no compute tensor"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scheduleCases")
    void scheduleApiNamesTheCulprit(String entry, Executable call, String[] fragments) {
        check(entry, call, fragments);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("runtimeCases")
    void runtimeApiNamesTheCulprit(String entry, Executable call, String[] fragments) {
        check(entry, call, fragments);
    }

    private static void check(String entry, Executable call, String[] fragments) {
        KilnException e = assertThrows(KilnException.class, call, entry);
        assertThat(e.getMessage()).as(entry).contains(fragments);
    }
}
