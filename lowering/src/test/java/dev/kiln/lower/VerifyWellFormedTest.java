package dev.kiln.lower;

import static dev.kiln.lower.GpuIr.bind;
import static dev.kiln.lower.GpuIr.buf;
import static dev.kiln.lower.GpuIr.c;
import static dev.kiln.lower.GpuIr.func;
import static dev.kiln.lower.GpuIr.load;
import static dev.kiln.lower.GpuIr.loop;
import static dev.kiln.lower.GpuIr.serial;
import static dev.kiln.lower.GpuIr.store;
import static dev.kiln.lower.GpuIr.v;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.lower.VerifyWellFormed.Context;
import dev.kiln.lower.VerifyWellFormed.Rule;
import dev.kiln.target.Target;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each rule of the verifier on a hand-made ill-formed program, and well-formed programs passing. */
class VerifyWellFormedTest {
    private final Buffer a = buf("A", MemoryScope.GLOBAL, 8);
    private final Buffer out = buf("C", MemoryScope.GLOBAL, 8);
    private final Var i = v("i"), j = v("j");

    private static Context any() {
        return new Context(null, null, Rule.always());
    }

    private static Context with(Target.Kind kind, GpuLimits gpu, Rule... more) {
        Set<Rule> rules = EnumSet.copyOf(Rule.always());
        rules.addAll(Set.of(more));
        return new Context(kind, gpu, rules);
    }

    /** for i in 0..8 { C[i] = A[i] }: well formed. */
    private PrimFunc copy() {
        return func(serial(i, 8, store(out, load(a, i), i)), a, out);
    }

    private static void assertIllFormed(PrimFunc f, Context ctx, String... parts) {
        assertThatThrownBy(() -> VerifyWellFormed.check(f, ctx))
                .isInstanceOf(KilnException.class)
                .satisfies(e -> {
                    for (String p : parts) assertThat(e.getMessage()).contains(p);
                });
    }

    @Test
    void aWellFormedProgramPasses() {
        assertThatCode(() -> VerifyWellFormed.check(copy(), with(Target.Kind.CPU, null, Rule.values())))
                .doesNotThrowAnyException();
    }

    @Test
    void aVariableUsedOutsideItsLoopIsRefused() {
        PrimFunc f = func(serial(i, 8, store(out, load(a, j), i)), a, out);
        assertIllFormed(f, any(), "bound variables", "variable 'j' is used outside every loop or let", "C[i] = A[j]");
    }

    @Test
    void aLoopExtentUsingItsOwnVariableIsRefused() {
        PrimFunc f = func(new For(i, c(0), i, ForKind.SERIAL, null, store(out, load(a, i), i)), a, out);
        assertIllFormed(f, any(), "variable 'i' is used outside", "for i in 0..i {");
    }

    @Test
    void aVariableBoundAgainInsideItsScopeIsRefused() {
        PrimFunc f = func(serial(i, 8, serial(i, 8, store(out, load(a, i), i))), a, out);
        assertIllFormed(f, any(), "variable 'i' is bound again inside its own scope");
        PrimFunc let = func(serial(i, 8, new Let(i, c(1), store(out, load(a, i), i))), a, out);
        assertIllFormed(let, any(), "variable 'i' is bound again");
    }

    @Test
    void siblingScopesMayShareAVariable() {
        PrimFunc f = func(
                dev.kiln.tir.Seq.of(serial(i, 8, store(out, load(a, i), i)), serial(i, 8, store(out, load(a, i), i))),
                a,
                out);
        assertThatCode(() -> VerifyWellFormed.check(f, any())).doesNotThrowAnyException();
    }

    @Test
    void aBufferAccessedOutsideItsAllocationIsRefused() {
        Buffer t = buf("T", MemoryScope.GLOBAL, 8);
        PrimFunc store = func(serial(i, 8, store(t, load(a, i), i)), a, out);
        assertIllFormed(
                store, any(), "allocated buffers", "buffer 'T' is accessed outside its allocation", "T[i] = A[i]");
        PrimFunc read = func(serial(i, 8, store(out, load(t, i), i)), a, out);
        assertIllFormed(read, any(), "buffer 'T'", "C[i] = T[i]");
        PrimFunc allocated = func(new Allocate(t, serial(i, 8, store(t, load(a, i), i))), a, out);
        assertThatCode(() -> VerifyWellFormed.check(allocated, any())).doesNotThrowAnyException();
        PrimFunc afterAllocation = func(
                dev.kiln.tir.Seq.of(
                        new Allocate(t, serial(i, 8, store(t, load(a, i), i))),
                        serial(j, 8, store(out, load(t, j), j))),
                a,
                out);
        assertIllFormed(afterAllocation, any(), "buffer 'T'", "C[j] = T[j]");
    }

    @Test
    void aViewOfAParameterIsItsMemory() {
        Buffer flat = out.flatView();
        PrimFunc f = func(serial(i, 8, store(flat, load(a.flatView(), i), i)), a, out);
        assertThatCode(() -> VerifyWellFormed.check(f, any())).doesNotThrowAnyException();
    }

    @Test
    void aLoopOfExtentBelowOneIsRefused() {
        PrimFunc f = func(serial(i, 0, store(out, load(a, i), i)), a, out);
        assertIllFormed(f, any(), "positive extents", "loop 'i' has extent 0");
    }

    @Test
    void vectorLanesHoldOnlyOnceEstablished() {
        PrimFunc nested = func(loop(ForKind.VECTORIZED, i, 8, serial(j, 2, store(out, load(a, i), i))), a, out);
        assertThatCode(() -> VerifyWellFormed.check(nested, any())).doesNotThrowAnyException();
        assertIllFormed(
                nested,
                with(null, null, Rule.VECTOR_LANES),
                "vector lanes",
                "vectorized loop 'i' holds a For",
                "for j in 0..2 {");
        PrimFunc symbolic = func(
                serial(j, 4, new For(i, c(0), j.add(1), ForKind.VECTORIZED, null, store(out, load(a, i), i))), a, out);
        assertIllFormed(
                symbolic, with(null, null, Rule.VECTOR_LANES), "vectorized loop 'i' has no constant lane count");
        PrimFunc ok = func(loop(ForKind.VECTORIZED, i, 8, store(out, load(a, i), i)), a, out);
        assertThatCode(() -> VerifyWellFormed.check(ok, with(null, null, Rule.VECTOR_LANES)))
                .doesNotThrowAnyException();
    }

    @Test
    void aThreadBoundLoopIsRefusedOnACpu() {
        PrimFunc f = func(bind("threadIdx.x", i, 8, store(out, load(a, i), i)), a, out);
        assertIllFormed(
                f,
                with(Target.Kind.CPU, null, Rule.THREAD_BINDINGS),
                "thread bindings",
                "loop 'i' is bound to threadIdx.x on a CPU target");
        assertThatCode(() -> VerifyWellFormed.check(f, any())).doesNotThrowAnyException();
    }

    @Test
    void gpuBindingsAreCheckedForTheTargetOnceVerified() {
        Var b = v("b");
        // 2048 threads on threadIdx.x: more than CUDA allows
        PrimFunc f =
                func(bind("blockIdx.x", b, 1, bind("threadIdx.x", i, 2048, store(out, load(a, c(0)), c(0)))), a, out);
        Context gpu = new Context(Target.Kind.CUDA, GpuLimits.h200(), Rule.always());
        assertThatCode(() -> VerifyWellFormed.check(f, gpu)).doesNotThrowAnyException();
        assertIllFormed(f, gpu.with(Set.of(Rule.THREAD_BINDINGS)), "thread bindings", "launches 2048 on threadIdx.x");
    }

    /**
     * A {@code tensorize$} nest of the bfloat16 dot product (loops of 16 and 2 around one store): well formed; with its
     * pair loop narrowed to 1 (what SkipPaddedTerms once did), or a guard around the store, the rule names the loop or
     * the statement.
     */
    @Test
    void aTensorizedNestIsItsIntrinsicsLoopsAroundOneStore() {
        Buffer w = buf("W", MemoryScope.GLOBAL, 32);
        Var k = v("k");
        String key = dev.kiln.tir.Pragma.TENSORIZE_PREFIX + dev.kiln.schedule.TensorIntrinsics.BF16_DOT;
        java.util.function.BiFunction<Long, dev.kiln.tir.Stmt, PrimFunc> nest = (pairs, body) ->
                func(new dev.kiln.tir.Pragma(key, 0, serial(j, 16, serial(k, pairs, body))), a, w, out);
        dev.kiln.tir.Stmt st = store(out, load(a, k), j);
        assertThatCode(() -> VerifyWellFormed.check(nest.apply(2L, st), any())).doesNotThrowAnyException();
        assertIllFormed(
                nest.apply(1L, st),
                any(),
                "tensorized nests",
                "loop 'k' is not the pattern's loop 1 (extent 2, serial)",
                "at `");
        dev.kiln.tir.Stmt guarded = new dev.kiln.tir.IfThenElse(k.lt(c(1)), st, null);
        assertIllFormed(nest.apply(2L, guarded), any(), "tensorized nests", "hold a IfThenElse, not one store");
        assertThatCode(() -> VerifyWellFormed.check(nest.apply(1L, st), new Context(null, null, Set.of())))
                .as("the rule off")
                .doesNotThrowAnyException();
    }
}
