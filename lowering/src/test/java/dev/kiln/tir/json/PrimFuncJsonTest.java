package dev.kiln.tir.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.fuzz.RandomComputations;
import dev.kiln.fuzz.RandomSchedules;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Range;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Softmax;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Round trips of {@link PrimFuncJson}: every node kind, constants at the edges of their types, the
 * identity of variables, buffers, views and reducers, lowered random schedules (printouts equal,
 * programs isomorphic, interpreter results bit-identical), and the errors for what cannot be
 * written or read.
 */
class PrimFuncJsonTest {

    private static PrimFunc roundTrip(PrimFunc f) {
        PrimFunc back = PrimFuncJson.fromJson(PrimFuncJson.toJson(f));
        assertThat(back.toString()).isEqualTo(f.toString());
        Isomorphism.check(f, back);
        return back;
    }

    private static IntImm c(long v) {
        return IntImm.i32(v);
    }

    /** A program with every statement kind and every expression kind the loop IR allows. */
    private static PrimFunc everyNode() {
        Buffer a = Buffer.rowMajor("A", DType.FLOAT32, List.of(4L, 6L), MemoryScope.GLOBAL);
        Buffer b = new Buffer("B", DType.FLOAT32, List.of(c(4), c(6)), List.of(c(8), c(1)), MemoryScope.GLOBAL);
        Buffer n = Buffer.rowMajor("N", DType.INT64, List.of(4L), MemoryScope.GLOBAL);
        Buffer sh = Buffer.rowMajor("S", DType.FLOAT32, List.of(6L), MemoryScope.SHARED);
        Buffer loc = Buffer.rowMajor("L", DType.FLOAT16, List.of(2L), MemoryScope.LOCAL);
        Buffer af = a.flatView(), bf = b.flatView();
        Var i = new Var("i"), j = new Var("j"), t = new Var("t"), x = new Var("x", DType.FLOAT32);
        Var q = new Var("q", DType.INT64), bx = new Var("bx"), tx = new Var("tx"), u = new Var("u"), w = new Var("w");
        List<Expr> all = new ArrayList<>();
        for (BinaryOp op : BinaryOp.values()) {
            all.add(
                    op == BinaryOp.DIV
                            ? new Binary(op, x, FloatImm.f32(3)).cast(DType.INT32)
                            : op.integerOnly() ? new Binary(op, i, c(3)) : new Binary(op, i, j));
        }
        Expr sum = all.getFirst();
        for (Expr e : all.subList(1, all.size())) sum = sum.add(e);
        Expr cond = new Compare(CompareOp.EQ, i, j);
        for (CompareOp op : CompareOp.values()) cond = new Or(cond, new Compare(op, x, FloatImm.f32(0.5)));
        cond = new And(new Not(cond), new Compare(CompareOp.NE, q, new IntImm(DType.INT64, Long.MIN_VALUE)));
        Expr floats = x;
        for (Intrinsic fn : Intrinsic.values()) {
            List<Expr> args = new ArrayList<>();
            for (int k = 0; k < fn.arity(); k++) args.add(floats);
            floats = new Call(fn, args);
        }
        Stmt inner = Seq.of(
                new Store(af, List.of(i.mul(6).add(j)), new Select(cond, floats, FloatImm.f32(-0.0))),
                new Store(sh, List.of(j), new BufferLoad(bf, List.of(i.mul(8).add(j)))),
                new Barrier(),
                new Store(loc, List.of(c(1)), new Cast(DType.FLOAT16, new BufferLoad(sh, List.of(j)))),
                new Store(n, List.of(i), new Cast(DType.INT64, sum)),
                new Evaluate(new Call(Intrinsic.ABS, List.of(new IntImm(DType.INT8, -128)))),
                new IfThenElse(
                        new Compare(CompareOp.LT, j, c(3)),
                        new Store(b, List.of(i, j), new FloatImm(DType.FLOAT32, Double.NaN)),
                        null),
                new IfThenElse(
                        new IntImm(DType.BOOL, 1),
                        Seq.empty(),
                        new Store(b, List.of(i, j), new FloatImm(DType.FLOAT32, Double.NEGATIVE_INFINITY))));
        Stmt body = new Let(x, new BufferLoad(a, List.of(i, j)), new Let(q, new BufferLoad(n, List.of(i)), inner));
        Stmt loops = new For(
                i,
                c(0),
                c(4),
                ForKind.PARALLEL,
                null,
                new Pragma(
                        Pragma.AUTO_UNROLL_MAX_STEP,
                        16,
                        new For(j, c(0), c(6), ForKind.SERIAL, null, new Allocate(sh, new Allocate(loc, body)))));
        Stmt kinds = Seq.of(
                new For(
                        t,
                        c(0),
                        c(2),
                        ForKind.VECTORIZED,
                        null,
                        new Store(n, List.of(t), new IntImm(DType.INT64, Long.MAX_VALUE))),
                new For(
                        u,
                        c(1),
                        c(2),
                        ForKind.UNROLLED,
                        null,
                        new Store(n, List.of(u), new Cast(DType.INT64, new IntImm(DType.UINT8, 255)))),
                new For(
                        bx,
                        c(0),
                        c(2),
                        ForKind.THREAD_BOUND,
                        ThreadAxis.BLOCK_Y,
                        new For(
                                tx,
                                c(0),
                                c(2),
                                ForKind.THREAD_BOUND,
                                ThreadAxis.VTHREAD,
                                new For(w, c(0), c(1), ForKind.THREAD_BOUND, ThreadAxis.THREAD_Z, new Barrier()))));
        return new PrimFunc("every_node", List.of(a, b, n), new Seq(List.of(loops, new Seq(List.of(kinds)))));
    }

    @Test
    void everyStatementAndExpressionKindRoundTrips() {
        PrimFunc f = everyNode();
        PrimFunc back = roundTrip(f);
        assertThat(PrimFuncJson.toJson(back)).isEqualTo(PrimFuncJson.toJson(f));
        // the nested Seq is kept as written (not flattened), so the structure is the same
        assertThat(((Seq) back.body()).stmts().get(1)).isInstanceOf(Seq.class);
    }

    @Test
    void reductionsKeepTheirReducerAxesAndValueIndex() {
        IterVar k = new IterVar("k", Range.of(5), IterVar.Kind.REDUCE);
        IterVar r = new IterVar("r", new Range(c(1), c(3)), IterVar.Kind.REDUCE);
        Reducer argmax = Reducer.of(
                "argmax",
                List.of(DType.FLOAT32, DType.INT32),
                (l, rr) -> List.of(
                        new Select(new Compare(CompareOp.GT, rr.get(0), l.get(0)), rr.get(0), l.get(0)),
                        new Select(new Compare(CompareOp.GT, rr.get(0), l.get(0)), rr.get(1), l.get(1))),
                List.of(Reducer.lowest(DType.FLOAT32), IntImm.i32(-1)));
        Buffer a = Buffer.rowMajor("A", DType.FLOAT32, List.of(5L, 4L), MemoryScope.GLOBAL);
        List<Expr> sources = List.of(new BufferLoad(a, List.of(k, r)), k.add(r));
        Expr cond = new Compare(CompareOp.LT, k, c(4));
        Stmt body = Seq.of(
                new Evaluate(new Reduce(argmax, sources, List.of(k, r), cond, 0)),
                new Evaluate(new Reduce(argmax, sources, List.of(k, r), cond, 1)),
                new Evaluate(Reducer.sum(DType.FLOAT32)
                        .reduce(new BufferLoad(a, List.of(k, c(0))), List.of(k), IntImm.bool(true))));
        PrimFunc back = roundTrip(new PrimFunc("reduce", List.of(a), body));
        List<Stmt> s = ((Seq) back.body()).stmts();
        Reduce v0 = (Reduce) ((Evaluate) s.get(0)).value(), v1 = (Reduce) ((Evaluate) s.get(1)).value();
        assertThat(v0.sameReductionAs(v1))
                .as("one reducer object for both values")
                .isTrue();
        assertThat(v0.valueIndex()).isZero();
        assertThat(v1.valueIndex()).isOne();
        assertThat(v0.axes().get(1).dom().min()).isEqualTo(c(1));
        assertThat(v0.axes().get(0).isReduce()).isTrue();
    }

    @Test
    void constantsAtTheEdgesOfTheirTypesRoundTripExactly() {
        double[] doubles = {
            0.1,
            -0.0,
            0.0,
            Double.MIN_VALUE,
            -Double.MAX_VALUE,
            Double.NaN,
            Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY,
            1.0 / 3,
            65504.0,
            0x1.FCp127
        };
        Buffer f64 = Buffer.rowMajor("D", DType.FLOAT64, List.of((long) doubles.length), MemoryScope.GLOBAL);
        Buffer f16 = Buffer.rowMajor("H", DType.FLOAT16, List.of(1L), MemoryScope.GLOBAL);
        Buffer bf = Buffer.rowMajor("BF", DType.BFLOAT16, List.of(1L), MemoryScope.GLOBAL);
        List<Stmt> stores = new ArrayList<>();
        for (int k = 0; k < doubles.length; k++)
            stores.add(new Store(f64, List.of(c(k)), new FloatImm(DType.FLOAT64, doubles[k])));
        stores.add(new Store(f16, List.of(c(0)), new FloatImm(DType.FLOAT16, 65504.0)));
        stores.add(new Store(bf, List.of(c(0)), new FloatImm(DType.BFLOAT16, -0x1.FCp127)));
        for (DType t : DType.values()) {
            if (!t.isInt() && !t.isBool()) continue;
            for (long v : new long[] {t.minInt(), t.maxInt()}) {
                stores.add(new Evaluate(new Cast(DType.FLOAT64, new IntImm(t, v))));
            }
        }
        PrimFunc f = new PrimFunc("consts", List.of(f64, f16, bf), Seq.of(stores));
        roundTrip(f);
        try (NDArray d = NDArray.allocate(DType.FLOAT64, doubles.length);
                NDArray h = NDArray.allocate(DType.FLOAT16, 1);
                NDArray b = NDArray.allocate(DType.BFLOAT16, 1)) {
            Interpreter.run(PrimFuncJson.fromJson(PrimFuncJson.toJson(f)), d, h, b);
            for (int k = 0; k < doubles.length; k++) {
                assertThat(Double.doubleToRawLongBits(d.getDouble(k)))
                        .as("value %s", doubles[k])
                        .isEqualTo(Double.doubleToRawLongBits(doubles[k]));
            }
            assertThat(h.getDouble(0)).isEqualTo(65504.0);
            assertThat(b.getDouble(0)).isEqualTo(-0x1.FCp127);
        }
    }

    @Test
    void variablesBuffersAndViewsKeepTheirIdentity() {
        Buffer a = Buffer.rowMajor("A", DType.FLOAT32, List.of(3L, 5L), MemoryScope.GLOBAL);
        Buffer view1 = a.flatView(), view2 = a.flatView();
        Buffer twin = Buffer.rowMajor("A", DType.FLOAT32, List.of(15L), MemoryScope.GLOBAL);
        Var i1 = new Var("i"), i2 = new Var("i");
        Stmt inner = Seq.of(
                new Store(view1, List.of(i1.mul(5).add(i2)), FloatImm.f32(1)),
                new Store(
                        view2,
                        List.of(i2),
                        new BufferLoad(twin, List.of(i1.mul(5).add(i2)))));
        PrimFunc f =
                new PrimFunc("ids", List.of(a, twin), For.serial(i1, c(0), c(3), For.serial(i2, c(0), c(5), inner)));
        PrimFunc back = roundTrip(f);
        For outer = (For) back.body(), in = (For) outer.body();
        assertThat(outer.var()).isNotSameAs(in.var());
        List<Stmt> s = ((Seq) in.body()).stmts();
        Store s0 = (Store) s.get(0), s1 = (Store) s.get(1);
        assertThat(s0.buffer()).isNotSameAs(s1.buffer());
        assertThat(s0.buffer().base())
                .isSameAs(back.params().get(0))
                .isSameAs(s1.buffer().base());
        assertThat(((BufferLoad) s1.value()).buffer())
                .isSameAs(back.params().get(1))
                .isNotSameAs(back.params().get(0));
        assertThat(s1.indices().getFirst()).isSameAs(in.var());
    }

    @Test
    void scheduledProgramsRoundTripAndComputeTheSame() {
        int checked = 0;
        for (int c = 0; c < 40; c++) {
            SplittableRandom rng = new SplittableRandom(0x150ddL + c);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule sch =
                    RandomSchedules.generate(dag, rng, rng.nextInt(4) == 0).schedule();
            PrimFunc f;
            try {
                f = Lowering.lower("scheduled", sch);
            } catch (ScheduleException e) {
                continue;
            }
            checkSameResults(dag, f, roundTrip(f), 0x5eedL + c);
            checked++;
        }
        assertThat(checked).isGreaterThan(30);
    }

    @Test
    void operatorLibraryProgramsRoundTrip() {
        Tensor x = Te.placeholder("X", DType.FLOAT32, 1, 3, 9, 7);
        Tensor w = Te.placeholder("W", DType.FLOAT32, 4, 3, 3, 3);
        Tensor conv = Conv.conv2dNchw(x, w, 2, 1);
        Tensor y = Te.placeholder("Y", DType.FLOAT32, 5, 11);
        ComputeDAG softmax = ComputeDAG.of(Softmax.softmax(y, 1));
        ComputeDAG norm = ComputeDAG.of(Norm.layerNorm(
                y, Te.placeholder("G", DType.FLOAT32, 11), Te.placeholder("Bt", DType.FLOAT32, 11), 1, 1e-5));
        for (ComputeDAG dag : List.of(ComputeDAG.of(conv), softmax, norm)) {
            PrimFunc f = Lowering.lower("op", Schedule.empty(dag));
            checkSameResults(dag, f, roundTrip(f), 7);
            PrimFunc raw = LowerDefault.lower("raw", dag);
            roundTrip(raw);
        }
    }

    private static void checkSameResults(ComputeDAG dag, PrimFunc f, PrimFunc back, long seed) {
        List<NDArray> a = new ArrayList<>(), b = new ArrayList<>();
        try {
            for (int k = 0; k < f.params().size(); k++) {
                Buffer p = f.params().get(k);
                NDArray x = NDArray.allocate(p).fillRandom(seed + k);
                a.add(x);
                b.add(x.copy());
            }
            Interpreter.run(f, a.toArray(NDArray[]::new));
            Interpreter.run(back, b.toArray(NDArray[]::new));
            for (int k = dag.inputs().size(); k < a.size(); k++) b.get(k).assertClose(a.get(k), 0, 0);
        } finally {
            a.forEach(NDArray::close);
            b.forEach(NDArray::close);
        }
    }

    @Test
    void aTensorReadCannotBeWritten() {
        Tensor t = Te.placeholder("Input", DType.FLOAT32, 3);
        Buffer o = Buffer.rowMajor("O", DType.FLOAT32, List.of(3L), MemoryScope.GLOBAL);
        PrimFunc f = new PrimFunc("unlowered", List.of(o), new Store(o, List.of(c(0)), t.at(1)));
        assertThatThrownBy(() -> PrimFuncJson.toJson(f))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("unlowered")
                .hasMessageContaining("Input")
                .hasMessageContaining("lower");
    }

    @Test
    void malformedDocumentsAreRefusedWithTheReason() {
        String good = PrimFuncJson.toJson(everyNode());
        assertThatThrownBy(() -> PrimFuncJson.fromJson("{\"format\":\"kiln-primfunc-0\"}"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("kiln-primfunc-1");
        assertThatThrownBy(() -> PrimFuncJson.fromJson("[1, 2"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("not a kiln-primfunc-1");
        assertThatThrownBy(() -> PrimFuncJson.fromJson(good.replace("[\"barrier\"]", "[\"fence\"]")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("unknown statement node 'fence'");
        assertThatThrownBy(() -> PrimFuncJson.fromJson(good.replace("\"bin\",\"add\"", "\"bin\",\"plus\"")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("unknown binary operator 'plus'");
        // a symbol that refers to a later one
        String forward = "{\"format\":\"kiln-primfunc-1\",\"name\":\"f\",\"symbols\":[{\"sym\":\"view\",\"of\":1,"
                + "\"name\":\"A\",\"shape\":[]}],\"params\":[],\"body\":[\"barrier\"]}";
        assertThatThrownBy(() -> PrimFuncJson.fromJson(forward))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("symbol 1, but only 0 are defined");
        // the node constructors' type rules still apply
        String typed = "{\"format\":\"kiln-primfunc-1\",\"name\":\"f\",\"symbols\":[{\"sym\":\"buffer\",\"name\":\"A\","
                + "\"dtype\":\"int32\",\"scope\":\"global\",\"shape\":[[\"int\",\"int32\",2]],"
                + "\"strides\":[[\"int\",\"int32\",1]]}],"
                + "\"params\":[0],\"body\":[\"store\",0,[[\"int\",\"int32\",0]],[\"float\",\"float32\",1.5]]}";
        assertThatThrownBy(() -> PrimFuncJson.fromJson(typed))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("buffer 'A' of type int32");
        assertThatThrownBy(() -> PrimFuncJson.fromJson(typed.replace("[\"store\",0,", "[\"store\",")))
                .isInstanceOf(KilnException.class);
    }
}
