package dev.kiln.schedule.layout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The check every layout-rewrite test makes: the original program on the original weights and
 * the rewritten program on the transformed weights, both in the reference interpreter, give the
 * same outputs bit for bit (tolerance 0: the rewritten program does the same arithmetic in the
 * same order, only the weight's addresses change).
 */
final class LayoutRewriteTesting {
    private LayoutRewriteTesting() {}

    /** Random inputs for the DAG's placeholders, then zeroed outputs. */
    static List<NDArray> arguments(ComputeDAG dag, long seed) {
        List<NDArray> args = new ArrayList<>();
        int i = 0;
        for (Tensor t : dag.arguments()) {
            long[] shape = t.shape().toArray();
            args.add(
                    t.isPlaceholder()
                            ? NDArray.random(t.dtype(), seed * 31 + i++, shape)
                            : NDArray.allocate(t.dtype(), shape));
        }
        return args;
    }

    /** Runs the schedule's program in the interpreter on {@code args} (outputs written in place). */
    static void run(Schedule s, List<NDArray> args) {
        Interpreter.run(Lowering.lower("f", s), args.toArray(NDArray[]::new));
    }

    /** Rewrites, runs both programs, asserts the outputs are identical; returns the result. */
    static LayoutRewrite.Result check(Schedule s, Set<Tensor> layoutFree, long seed) {
        ComputeDAG dag = s.dag();
        List<NDArray> args = arguments(dag, seed);
        run(s, args);
        LayoutRewrite.Result r = LayoutRewrite.rewrite(s, layoutFree);
        assertThat(r.schedule().dag().arguments()).hasSameSizeAs(dag.arguments());
        for (int i = 0; i < dag.arguments().size(); i++) {
            assertThat(r.schedule().dag().arguments().get(i).name())
                    .isEqualTo(dag.arguments().get(i).name());
        }
        assertThat(r.schedule().steps()).isEqualTo(s.steps());
        List<NDArray> fresh = arguments(dag, seed);
        List<NDArray> newArgs = r.transformArguments(fresh);
        for (LayoutRewrite.Transform t : r.transforms()) {
            assertThat(newArgs.get(t.argument()).shape())
                    .containsExactly(t.rewritten().shape().toArray());
        }
        run(r.schedule(), newArgs);
        int nIn = dag.inputs().size();
        for (int o = nIn; o < args.size(); o++) {
            Comparison cmp = newArgs.get(o).compareTo(args.get(o), 0, 0);
            assertThat(cmp.ok())
                    .as("output %d of the rewritten program (%s)\n%s", o, r.transforms(), cmp.report())
                    .isTrue();
        }
        return r;
    }

    /** The index text of every {@code name[...]} in a printed program (the function header excluded). */
    static List<String> indexTexts(String program, String name) {
        String body = program.substring(program.indexOf('{'));
        List<String> out = new ArrayList<>();
        for (int at = body.indexOf(name + "["); at >= 0; at = body.indexOf(name + "[", at + 1)) {
            if (at > 0
                    && (Character.isLetterOrDigit(body.charAt(at - 1))
                            || body.charAt(at - 1) == '_'
                            || body.charAt(at - 1) == '.')) continue;
            int depth = 0, i = at + name.length();
            for (; i < body.length(); i++) {
                if (body.charAt(i) == '[') depth++;
                if (body.charAt(i) == ']' && --depth == 0) break;
            }
            out.add(body.substring(at + name.length() + 1, i));
        }
        return out;
    }
}
