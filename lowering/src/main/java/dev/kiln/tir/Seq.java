package dev.kiln.tir;

import java.util.ArrayList;
import java.util.List;

/** Statements run one after another. */
public record Seq(List<Stmt> stmts) implements Stmt {
    public Seq {
        stmts = List.copyOf(stmts);
    }

    /** A sequence, flattening nested sequences; a single statement comes back as itself. */
    public static Stmt of(List<Stmt> stmts) {
        List<Stmt> flat = new ArrayList<>();
        for (Stmt s : stmts) {
            if (s instanceof Seq q) flat.addAll(q.stmts());
            else flat.add(s);
        }
        return flat.size() == 1 ? flat.get(0) : new Seq(flat);
    }

    public static Stmt of(Stmt... stmts) {
        return of(List.of(stmts));
    }

    /** The empty statement. */
    public static Seq empty() {
        return new Seq(List.of());
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
