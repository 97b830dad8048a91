package dev.kiln.tir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The traversal library: visit order, the shared walks, substitution. */
class StmtsTest {
    private final Buffer a = Buffer.rowMajor("A", DType.INT32, List.of(8L), MemoryScope.GLOBAL);
    private final Buffer b = Buffer.rowMajor("B", DType.INT32, List.of(8L), MemoryScope.GLOBAL);
    private final Buffer t = Buffer.rowMajor("T", DType.INT32, List.of(8L), MemoryScope.LOCAL);
    private final Var i = new Var("i"), x = new Var("x");

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    private static Expr load(Buffer buf, Expr idx) {
        return new BufferLoad(buf, List.of(idx));
    }

    /**
     * for i in 1..1 + 7 { let x = A[i]; if (x < 3) { T[i] = x } else { B[i] = T[i] }; A[0] = 1 }
     */
    private Stmt program() {
        Stmt branch = new IfThenElse(x.lt(c(3)), new Store(t, List.of(i), x), new Store(b, List.of(i), load(t, i)));
        Stmt body = Seq.of(new Let(x, load(a, i), branch), new Store(a, List.of(c(0)), c(1)));
        return new Allocate(t, new For(i, c(1), c(7), ForKind.SERIAL, null, body));
    }

    @Test
    void statementsAndExpressionsComeInProgramOrder() {
        List<String> stmts = new ArrayList<>();
        Stmts.forEachStmt(program(), s -> stmts.add(s.getClass().getSimpleName()));
        assertThat(stmts).containsExactly("Allocate", "For", "Seq", "Let", "IfThenElse", "Store", "Store", "Store");
        List<String> exprs = new ArrayList<>();
        Stmts.forEachExpr(program(), e -> exprs.add(ExprPrinter.print(e)));
        assertThat(exprs).containsExactly("1", "7", "A[i]", "(x < 3)", "i", "x", "i", "T[i]", "0", "1");
        List<String> nodes = new ArrayList<>();
        Stmts.forEachExprNode(new Store(b, List.of(i), load(t, i)), e -> nodes.add(ExprPrinter.print(e)));
        assertThat(nodes).containsExactly("i", "T[i]", "i");
    }

    @Test
    void aVisitorSeesWhatItOverridesAndSkipsWhatItDoesNotVisit() {
        List<String> seen = new ArrayList<>();
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof IfThenElse) return; // not inside
                if (s instanceof Store st) seen.add(st.buffer().name());
                visitChildren(s);
            }
        }.visit(program());
        assertThat(seen).containsExactly("A");
    }

    @Test
    void usesTouchesStoredAndSize() {
        Stmt p = program();
        assertThat(Stmts.uses(p, x)).isTrue();
        assertThat(Stmts.uses(p, new Var("y"))).isFalse();
        assertThat(Stmts.touches(p, t.flatView()))
                .as("a view is its base's memory")
                .isTrue();
        Stmt readOnly = new Store(b, List.of(i), load(a, i));
        assertThat(Stmts.touches(readOnly, a)).isTrue();
        assertThat(Stmts.touches(readOnly, t)).isFalse();
        assertThat(Stmts.stored(p)).containsExactly(t, b, a);
        assertThat(Stmts.size(p, 100)).isEqualTo(7); // the sequence is not counted
        assertThat(Stmts.size(p, 3)).isEqualTo(4);
        assertThat(Stmts.isEmpty(Seq.empty())).isTrue();
        assertThat(Stmts.isEmpty(p)).isFalse();
    }

    @Test
    void substituteReplacesUsesNotBindingsAndKeepsWhatItDoesNotChange() {
        Stmt p = program();
        assertThat(Stmts.substitute(p, new Var("y"), c(2))).isSameAs(p);
        assertThat(Stmts.substitute(p, Map.of())).isSameAs(p);
        Stmt q = Stmts.substitute(p, i, c(5));
        assertThat(q.toString())
                .contains("for i in 1..1 + 7")
                .contains("let x: int32 = A[5]")
                .contains("T[5] = x")
                .contains("B[5] = T[5]");
        Store untouched =
                (Store) ((Seq) ((For) ((Allocate) p).body()).body()).stmts().get(1);
        Store after =
                (Store) ((Seq) ((For) ((Allocate) q).body()).body()).stmts().get(1);
        assertThat(after)
                .as("a statement without the variable is the same object")
                .isSameAs(untouched);
    }
}
