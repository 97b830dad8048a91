package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.target.CpuTarget;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The state of generating one kernel's LLVM IR: the module and the function being written, the
 * values bound to variables and buffers, and the vector context (how many lanes, which are
 * active). Also the small helpers every generator needs to work on {@link Val}s: typing,
 * broadcasting, elementwise instructions and intrinsic calls, which emit scalar code when all
 * operands are uniform and {@code <lanes x T>} code otherwise.
 */
final class CodeGen {
    final ModuleBuilder mod;
    final CpuTarget target;
    final JitOptions options;
    final String symbol;
    final String funcName;
    /** Messages of the integer divisions that can see a zero divisor; status code k+1 is site k. */
    final List<String> divisionSites;
    /**
     * The byte sizes of the heap temporaries the kernel takes from the workspace cache (one entry per allocation
     * site, shared with outlined bodies): what the tuner's cache flush evicts besides the arguments.
     */
    final List<Long> heapTemporaries;

    FnBuilder fn;
    /** 1 in scalar code; the vector width inside a vectorized loop. */
    int lanes = 1;
    /** The active lanes ({@code <lanes x i1>}), or null when all are active. */
    Val mask;
    /** Pointer to the i32 status word of the running kernel (0: ok). */
    String status;
    /** Whether the expression being generated is a buffer index (integer arithmetic gets nsw). */
    boolean inIndex;
    /** Whether code is being generated inside a parallel loop's body. */
    boolean inParallel;
    /** The innermost auto_unroll_max_step pragma's limit (0 outside any). */
    long autoUnroll;

    final Map<Var, Val> vars = new IdentityHashMap<>();
    final Map<Buffer, String> buffers = new IdentityHashMap<>();
    /** Shared by a kernel's generators, so outlined functions get distinct names. */
    private final int[] outlinedCounter;

    CodeGen(ModuleBuilder mod, CpuTarget target, JitOptions options, String symbol, String funcName) {
        this(mod, target, options, symbol, funcName, new ArrayList<>(), new ArrayList<>(), new int[1]);
    }

    private CodeGen(
            ModuleBuilder mod,
            CpuTarget target,
            JitOptions options,
            String symbol,
            String funcName,
            List<String> divisionSites,
            List<Long> heapTemporaries,
            int[] outlinedCounter) {
        this.mod = mod;
        this.target = target;
        this.options = options;
        this.symbol = symbol;
        this.funcName = funcName;
        this.divisionSites = divisionSites;
        this.heapTemporaries = heapTemporaries;
        this.outlinedCounter = outlinedCounter;
    }

    /** A generator for another function of the same module (an outlined loop body). */
    CodeGen child(FnBuilder f) {
        CodeGen c =
                new CodeGen(mod, target, options, symbol, funcName, divisionSites, heapTemporaries, outlinedCounter);
        c.fn = f;
        return c;
    }

    /** A fresh name for an outlined function of this kernel. */
    String outlinedName(String what) {
        return symbol + "_" + what + (outlinedCounter[0]++);
    }

    // ---- types ---------------------------------------------------------------------------------

    /** The LLVM type of {@code v} in the current context. */
    String ty(Val v) {
        return v.form() == Val.Form.VARYING ? IrTypes.vec(IrTypes.reg(v.dtype()), lanes) : IrTypes.reg(v.dtype());
    }

    /** The vector type of {@code t} with the current lanes. */
    String vty(DType t) {
        return IrTypes.vec(IrTypes.reg(t), lanes);
    }

    // ---- lanes -------------------------------------------------------------------------------

    /** {@code v} as a {@code <lanes x T>} operand. */
    String vector(Val v) {
        return switch (v.form()) {
            case VARYING -> v.ref();
            case UNIFORM -> splat(v.ref(), IrTypes.reg(v.dtype()));
            case LINEAR ->
                fn.emit("add " + vty(v.dtype()) + " " + splat(v.ref(), IrTypes.reg(v.dtype())) + ", "
                        + laneSteps(v.dtype(), v.step()));
        };
    }

    /** A scalar broadcast to every lane. */
    String splat(String ref, String elem) {
        if (IrTypes.isLiteral(ref)) {
            StringBuilder sb = new StringBuilder("<");
            for (int l = 0; l < lanes; l++)
                sb.append(l == 0 ? "" : ", ").append(elem).append(' ').append(ref);
            return sb.append('>').toString();
        }
        String vt = IrTypes.vec(elem, lanes);
        String ins = fn.emit("insertelement " + vt + " poison, " + elem + " " + ref + ", i64 0");
        return fn.emit("shufflevector " + vt + " " + ins + ", " + vt + " poison, " + IrTypes.vec("i32", lanes)
                + " zeroinitializer");
    }

    /** The constant vector {@code <0, step, 2 step, ...>} of integer type {@code t}. */
    String laneSteps(DType t, long step) {
        StringBuilder sb = new StringBuilder("<");
        for (int l = 0; l < lanes; l++) {
            sb.append(l == 0 ? "" : ", ").append(IrTypes.reg(t)).append(' ').append(IrTypes.intConst(t, step * l));
        }
        return sb.append('>').toString();
    }

    /** A constant {@code <lanes x i1>} with every lane true. */
    String allTrue() {
        return splat("true", "i1");
    }

    /** The current mask as an operand (all true when there is none). */
    String maskOperand() {
        return mask == null ? allTrue() : mask.ref();
    }

    // ---- instructions ------------------------------------------------------------------------

    /**
     * {@code opcode a, b} with operands of {@code a}'s type; the result has type {@code result}.
     * Scalar when both are uniform, otherwise on vectors.
     */
    Val op2(String opcode, Val a, Val b, DType result) {
        if (a.isUniform() && b.isUniform()) {
            return Val.uniform(fn.emit(opcode + " " + IrTypes.reg(a.dtype()) + " " + a.ref() + ", " + b.ref()), result);
        }
        String va = vector(a), vb = vector(b);
        return Val.varying(fn.emit(opcode + " " + vty(a.dtype()) + " " + va + ", " + vb), result);
    }

    /** A conversion instruction ({@code sext}, {@code fptrunc}, ...) from {@code v} to {@code to}'s register type. */
    Val convert(String opcode, Val v, String toElem, DType to) {
        if (v.isUniform()) {
            return Val.uniform(fn.emit(opcode + " " + IrTypes.reg(v.dtype()) + " " + v.ref() + " to " + toElem), to);
        }
        String vv = vector(v);
        return Val.varying(fn.emit(opcode + " " + vty(v.dtype()) + " " + vv + " to " + IrTypes.vec(toElem, lanes)), to);
    }

    /**
     * A conversion between explicitly named element types, for values whose LLVM type is not
     * their dtype's register type (half and i16 memory forms); returns a value of the same form.
     */
    Val convertRaw(String opcode, Val v, String fromElem, String toElem, DType result) {
        if (v.isUniform())
            return Val.uniform(fn.emit(opcode + " " + fromElem + " " + v.ref() + " to " + toElem), result);
        return Val.varying(
                fn.emit(opcode + " " + IrTypes.vec(fromElem, lanes) + " " + v.ref() + " to "
                        + IrTypes.vec(toElem, lanes)),
                result);
    }

    /** {@code select cond, a, b}: a scalar select when the condition is uniform. */
    Val select(Val cond, Val a, Val b) {
        if (cond.isUniform() && a.isUniform() && b.isUniform()) {
            String t = IrTypes.reg(a.dtype());
            return Val.uniform(
                    fn.emit("select i1 " + cond.ref() + ", " + t + " " + a.ref() + ", " + t + " " + b.ref()),
                    a.dtype());
        }
        String va = vector(a), vb = vector(b);
        String c = cond.isUniform() ? "i1 " + cond.ref() : IrTypes.vec("i1", lanes) + " " + vector(cond);
        return Val.varying(
                fn.emit("select " + c + ", " + vty(a.dtype()) + " " + va + ", " + vty(a.dtype()) + " " + vb),
                a.dtype());
    }

    /**
     * A call of an intrinsic overloaded on its operand type ({@code llvm.exp.f32} or
     * {@code llvm.exp.v16f32}); {@code extra} are trailing typed immediate arguments such as
     * {@code "i1 false"}. The result has {@code result}'s type.
     */
    Val intrinsic(String base, DType result, List<Val> args, String... extra) {
        return flaggedIntrinsic("", base, result, args, extra);
    }

    /** {@link #intrinsic} as a call with fast-math {@code flags} ({@code "nsz"}; empty for none). */
    Val flaggedIntrinsic(String flags, String base, DType result, List<Val> args, String... extra) {
        boolean uniform = args.stream().allMatch(Val::isUniform);
        int n = uniform ? 1 : lanes;
        String elem = IrTypes.reg(args.get(0).dtype());
        String name = base + "." + IrTypes.mangle(elem, n);
        List<String> types = new ArrayList<>();
        List<String> ops = new ArrayList<>();
        for (Val a : args) {
            String t = IrTypes.vec(IrTypes.reg(a.dtype()), n);
            types.add(t);
            ops.add(t + " " + (uniform ? a.ref() : vector(a)));
        }
        for (String x : extra) {
            types.add(x.substring(0, x.indexOf(' ')));
            ops.add(x);
        }
        String ret = IrTypes.vec(IrTypes.reg(result), n);
        mod.declare(name, ret, String.join(", ", types));
        String r = fn.emit("call " + (flags.isEmpty() ? "" : flags + " ") + ret + " @" + name + "("
                + String.join(", ", ops) + ")");
        return uniform ? Val.uniform(r, result) : Val.varying(r, result);
    }

    /** Lane {@code l} of a varying value as a scalar. */
    String extract(Val v, int l) {
        if (v.form() != Val.Form.VARYING) {
            if (v.isUniform()) return v.ref();
            String step = IrTypes.intConst(v.dtype(), v.step() * l);
            return fn.emit("add " + IrTypes.reg(v.dtype()) + " " + v.ref() + ", " + step);
        }
        return fn.emit("extractelement " + vty(v.dtype()) + " " + v.ref() + ", i64 " + l);
    }

    /** Applies a scalar generator lane by lane and packs the results (for libm calls without vector forms). */
    Val perLane(DType result, List<Val> args, java.util.function.Function<List<String>, String> scalar) {
        if (args.stream().allMatch(Val::isUniform)) {
            return Val.uniform(scalar.apply(args.stream().map(Val::ref).toList()), result);
        }
        String vt = vty(result);
        String acc = "poison";
        for (int l = 0; l < lanes; l++) {
            List<String> s = new ArrayList<>();
            for (Val a : args) s.add(extract(a, l));
            String r = scalar.apply(s);
            acc = fn.emit("insertelement " + vt + " " + acc + ", " + IrTypes.reg(result) + " " + r + ", i64 " + l);
        }
        return Val.varying(acc, result);
    }

    /** {@code true} in an i1 when any active lane of a varying bool is true. */
    String anyLane(Val v) {
        if (v.isUniform()) return v.ref();
        String name = "llvm.vector.reduce.or." + IrTypes.mangle("i1", lanes);
        mod.declare(name, "i1", IrTypes.vec("i1", lanes));
        return fn.emit("call i1 @" + name + "(" + IrTypes.vec("i1", lanes) + " " + vector(v) + ")");
    }

    /** {@code a and b} on bools, either possibly null (meaning true). */
    Val andMask(Val a, Val b) {
        if (a == null) return b;
        if (b == null) return a;
        return op2("and", a, b, DType.BOOL);
    }

    /** Sets the kernel's status word (monotonic store: parallel bodies may race to report). */
    void setStatus(int code) {
        fn.line("store atomic i32 " + code + ", ptr " + status + " monotonic, align 4");
    }

    /** The value of a variable, or an error naming it. */
    Val var(Var v) {
        Val r = vars.get(v);
        if (r == null) {
            throw new KilnException("function '" + funcName + "': variable '" + v.name() + "' is used but not bound");
        }
        return r;
    }

    /** The base pointer of a buffer (a view's is its base's), or an error naming it. */
    String buffer(Buffer b) {
        String r = buffers.get(b.base());
        if (r == null) {
            throw new KilnException("function '" + funcName + "': buffer '" + b.name()
                    + "' is neither a parameter nor allocated around its use");
        }
        return r;
    }
}
