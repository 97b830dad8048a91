package dev.kiln.arith;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.tir.Stmt;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The arithmetic simplifier: rewrites expressions bottom-up with algebraic rules until none
 * applies, and simplifies statements ({@link #simplify(Stmt)}). Every rule is one small method
 * in {@link ConstFold}, {@link ArithRules}, {@link IndexRules} or {@link LogicRules}, listed by
 * name in the tables below in the order they are tried (the names are what a trace reports).
 *
 * <p>Integer {@code + - *} are kept in one canonical linear form ({@link LinearForm}, rule
 * {@code linear-normalize}): {@code ((f*4 + i) * 2 + j) - f*8} becomes {@code i*2 + j}. The
 * division, remainder and comparison rules read their operands as linear forms too.
 *
 * <p>Known ranges of variables ({@link IntRange}, usually of loop variables) enable the rules
 * that need bounds: {@code floordiv(i, 8) -> 0} for i in [0, 7], {@code i < 512 -> true} for i
 * in [0, 511]. The statement simplifier adds the ranges of enclosing loops itself.
 *
 * <p>Every rule preserves the value exactly under the types' semantics ({@link Scalars}):
 * integers wrap, so the rules that are only true without overflow (the division rules, the
 * comparisons decided by bounds) apply only when {@link ConstIntBound} proves that nothing
 * wraps. Without known ranges that is rarely provable for int32 variables: pass the ranges.
 * Floating-point rules are restricted to the IEEE-exact ones ({@link ArithRules} lists them).
 * A rule that would drop a sub-expression does not when that sub-expression may divide by zero
 * ({@link #canDrop}): the runtime must still report it.
 *
 * <p>Instances are cheap, immutable in what they know, and not thread-safe (they cache bounds).
 */
public final class Simplifier {
    /** Whole-tree passes at most; one pass reaches the fixed point unless a node hits its step limit. */
    static final int MAX_ROUNDS = 4;
    /** Rewrites of one node at most, per pass. */
    static final int MAX_STEPS_PER_NODE = 64;

    private static final List<Rule<Binary>> BINARY_RULES = List.of(
            Rule.of("fold-binary", (b, s) -> ConstFold.binary(b)),
            Rule.of("add-zero", ArithRules::addZero),
            Rule.of("sub-zero", ArithRules::subZero),
            Rule.of("mul-one", ArithRules::mulOne),
            Rule.of("div-one", ArithRules::divOne),
            Rule.of("mod-one", ArithRules::modOne),
            Rule.of("min-max-self", ArithRules::minMaxSelf),
            Rule.of("const-right", ArithRules::constRight),
            Rule.of("div-mod-recombine", IndexRules::divModRecombine),
            Rule.of("linear-normalize", ArithRules::linearNormalize),
            Rule.of("min-max-const-fold", ArithRules::minMaxConstFold),
            Rule.of("min-max-by-bounds", LogicRules::minMaxByBounds),
            Rule.of("trunc-to-floor", IndexRules::truncToFloor),
            Rule.of("div-by-bounds", IndexRules::divByBounds),
            Rule.of("mod-by-bounds", IndexRules::modByBounds),
            Rule.of("div-of-multiple", IndexRules::divOfMultiple),
            Rule.of("mod-of-multiple", IndexRules::modOfMultiple),
            Rule.of("div-split-sum", IndexRules::divSplitSum),
            Rule.of("mod-split-sum", IndexRules::modSplitSum),
            Rule.of("div-div", IndexRules::divDiv),
            Rule.of("mod-mod", IndexRules::modMod));

    private static final List<Rule<Compare>> COMPARE_RULES = List.of(
            Rule.of("fold-compare", (c, s) -> ConstFold.compare(c)),
            Rule.of("compare-self", LogicRules::compareSelf),
            Rule.of("compare-const-right", LogicRules::compareConstRight),
            Rule.of("compare-by-bounds", LogicRules::compareByBounds));

    private static final List<Rule<And>> AND_RULES = List.of(
            Rule.of("fold-and", (a, s) -> ConstFold.and(a)),
            Rule.of("and-const", LogicRules::andConst),
            Rule.of("and-self", LogicRules::andSelf));

    private static final List<Rule<Or>> OR_RULES = List.of(
            Rule.of("fold-or", (o, s) -> ConstFold.or(o)),
            Rule.of("or-const", LogicRules::orConst),
            Rule.of("or-self", LogicRules::orSelf));

    private static final List<Rule<Not>> NOT_RULES = List.of(
            Rule.of("fold-not", (n, s) -> ConstFold.not(n)),
            Rule.of("not-not", LogicRules::notNot),
            Rule.of("not-compare", LogicRules::notCompare));

    private static final List<Rule<Select>> SELECT_RULES = List.of(
            Rule.of("select-const", (x, s) -> ConstFold.select(x)),
            Rule.of("select-same", LogicRules::selectSame),
            Rule.of("select-not", LogicRules::selectNot));

    private static final List<Rule<Cast>> CAST_RULES =
            List.of(Rule.of("fold-cast", (c, s) -> ConstFold.cast(c)), Rule.of("cast-same", LogicRules::castSame));

    private static final List<Rule<Var>> VAR_RULES = List.of(Rule.of("var-by-range", IndexRules::varByRange));

    private static final List<Rule<Call>> CALL_RULES = List.of(Rule.of("fold-call", (c, s) -> ConstFold.call(c)));

    private final Map<Var, IntRange> ranges;
    private final Consumer<String> trace;
    private final ConstIntBound bounds;

    /** A simplifier that knows no variable ranges. */
    public Simplifier() {
        this(Map.of(), null);
    }

    /** A simplifier that knows these variable ranges (closed intervals). */
    public Simplifier(Map<Var, IntRange> ranges) {
        this(ranges, null);
    }

    private Simplifier(Map<Var, IntRange> ranges, Consumer<String> trace) {
        this.ranges = Map.copyOf(ranges);
        this.trace = trace;
        this.bounds = new ConstIntBound(this.ranges);
    }

    /** The same simplifier, also knowing that {@code v} lies in {@code r}. */
    public Simplifier withRange(Var v, IntRange r) {
        Map<Var, IntRange> m = new HashMap<>(ranges);
        m.put(v, r);
        return new Simplifier(m, trace);
    }

    /**
     * The same simplifier, reporting the name of every rule that fires to {@code listener}.
     */
    public Simplifier withTrace(Consumer<String> listener) {
        return new Simplifier(ranges, listener);
    }

    /** The variable ranges this simplifier knows. */
    public Map<Var, IntRange> ranges() {
        return ranges;
    }

    /** The bound analysis over {@link #ranges()}. */
    public ConstIntBound bounds() {
        return bounds;
    }

    /**
     * Simplifies an expression; the result has the same type and, for every variable value in range, the same value.
     */
    public Expr simplify(Expr e) {
        Expr cur = e;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Pass p = new Pass();
            Expr next = p.visit(cur);
            if (next == cur || !p.hitLimit) return next;
            cur = next;
        }
        return cur;
    }

    /**
     * Simplifies a statement: every expression in it (with the ranges of the enclosing loops),
     * constant conditions, loops of extent 0 or 1, nested and empty sequences
     * ({@link StmtSimplifier} has the rules).
     */
    public Stmt simplify(Stmt s) {
        return StmtSimplifier.simplify(this, s);
    }

    /** Tells the trace listener that a rule fired. */
    void fired(String rule) {
        if (trace != null) trace.accept(rule);
    }

    /**
     * Whether a rule may drop {@code e} from the program: false when {@code e} contains an
     * integer division or remainder whose divisor may be zero (the runtime must report it).
     */
    boolean canDrop(Expr e) {
        boolean[] trap = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof Binary b
                    && b.op().integerOnly()
                    && bounds.bound(b.b()).contains(0)) trap[0] = true;
        });
        return !trap[0];
    }

    private Expr applyRules(Expr x) {
        return switch (x) {
            case Binary b -> first(BINARY_RULES, b);
            case Compare c -> first(COMPARE_RULES, c);
            case And a -> first(AND_RULES, a);
            case Or o -> first(OR_RULES, o);
            case Not n -> first(NOT_RULES, n);
            case Select s -> first(SELECT_RULES, s);
            case Cast c -> first(CAST_RULES, c);
            case Call c -> first(CALL_RULES, c);
            case IntImm c -> null;
            case FloatImm c -> null;
            case Var v -> first(VAR_RULES, v);
            case BufferLoad l -> null;
            case TensorRead r -> null;
            case Reduce r -> null;
        };
    }

    private <T extends Expr> Expr first(List<Rule<T>> rules, T node) {
        for (Rule<T> r : rules) {
            Expr out = r.fn().apply(node, this);
            if (out != null) {
                fired(r.name());
                return out;
            }
        }
        return null;
    }

    /** One bottom-up pass: children first, then the rules at a node until none applies. */
    private final class Pass extends ExprRewriter {
        private final Set<Expr> done = Collections.newSetFromMap(new IdentityHashMap<>());
        boolean hitLimit;

        @Override
        public Expr visit(Expr e) {
            if (done.contains(e)) return e;
            Expr x = rewriteChildren(e);
            int steps = 0;
            for (Expr r; (r = applyRules(x)) != null; ) {
                x = rewriteChildren(r); // a rule may build new children; simplify them too
                if (++steps == MAX_STEPS_PER_NODE) {
                    hitLimit = true;
                    break;
                }
            }
            done.add(x);
            return x;
        }
    }
}
