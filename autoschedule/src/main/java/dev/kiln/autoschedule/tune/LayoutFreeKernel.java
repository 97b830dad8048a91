package dev.kiln.autoschedule.tune;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A kernel whose layout-free arguments (constant weights, {@link TuneOptions.Builder#layoutFree}) are read in the
 * layout of its tiles, as TVM's layout-free placeholders: {@link #pack} turns an original weight into that layout
 * once, and every {@link #call} takes the packed array at the weight's position (the other arguments as they are).
 * The program is the tuned schedule rewritten the way its measurements ran ({@link SearchTask#rewriteLayouts}), so
 * the kernel never copies its weights per call.
 *
 * <pre>{@code
 * try (LayoutFreeKernel k = AutoSchedule.buildLayoutFree(ComputeDAG.of(y), target, log, "w")) {
 *     NDArray wPacked = k.pack("w", w);    // once
 *     k.call(x, wPacked, y);               // every call
 * }
 * }</pre>
 */
public final class LayoutFreeKernel implements CompiledKernel {
    private final CompiledKernel kernel;
    private final LayoutRewrite.Result rewrite;
    private final List<Tensor> arguments;
    private final List<String> layoutFree;

    private LayoutFreeKernel(
            CompiledKernel kernel, LayoutRewrite.Result rewrite, List<Tensor> arguments, List<String> layoutFree) {
        this.kernel = kernel;
        this.rewrite = rewrite;
        this.arguments = List.copyOf(arguments);
        this.layoutFree = List.copyOf(layoutFree);
    }

    /**
     * Compiles {@code best}, a schedule of {@code task} (whose layout-free positions name the weights), with those
     * weights packed for its loops; {@code original} is the computation as the user declared it (argument names and
     * shapes).
     */
    static LayoutFreeKernel compile(ComputeDAG original, SearchTask task, Schedule best, Target target) {
        LayoutRewrite.Result r = task.rewriteLayouts(best);
        List<String> names = new ArrayList<>();
        for (int a : task.layoutFree()) names.add(original.arguments().get(a).name());
        CompiledKernel k = AutoSchedule.compile(
                r.schedule(), target, "tuned_" + original.outputs().getFirst().name());
        return new LayoutFreeKernel(k, r, original.arguments(), names);
    }

    /** The names of the layout-free arguments, in argument order. */
    public List<String> layoutFree() {
        return layoutFree;
    }

    /**
     * The array to pass at the position of layout-free argument {@code name} for its original value {@code original}
     * (of the placeholder's dtype and shape): a new array in the kernel's layout, owned by the caller (or {@code
     * original} itself when this program reads it as it is). Throws {@link KilnException} naming the argument when
     * it is not layout-free or the array does not fit the placeholder.
     */
    public NDArray pack(String name, NDArray original) {
        int position = position(name);
        Tensor t = arguments.get(position);
        if (original == null)
            throw new KilnException("pack: the array for layout-free argument '" + name + "' is null");
        if (original.dtype() != t.dtype()
                || !Arrays.equals(original.shape(), t.shape().toArray())) {
            throw new KilnException("pack: layout-free argument '" + name + "' is " + t.dtype() + " " + t.shape()
                    + ", got " + original.dtype() + " " + Arrays.toString(original.shape()));
        }
        return rewrite.transformArgument(position, original);
    }

    /** The shape the kernel reads layout-free argument {@code name} in (the shape of {@link #pack}'s result). */
    public long[] packedShape(String name) {
        int position = position(name);
        return kernel.func().params().get(position).constShape();
    }

    /** Which weights are packed and how (one line per rewritten or folded argument; empty when none changed). */
    public String note() {
        return rewrite.transforms().stream()
                .map(x -> "'" + arguments.get(x.argument()).name() + "' " + x.layout())
                .collect(Collectors.joining("; "));
    }

    private int position(String name) {
        if (!layoutFree.contains(name)) {
            throw new KilnException(
                    "'" + name + "' is not a layout-free argument of this kernel (layout-free: " + layoutFree + ")");
        }
        for (int a = 0; a < arguments.size(); a++) if (arguments.get(a).name().equals(name)) return a;
        throw new IllegalStateException("layout-free argument '" + name + "' is not among the arguments");
    }

    /**
     * Runs the program: the computation's arguments in order (inputs, then outputs), each layout-free one as
     * {@link #pack} returned it.
     */
    @Override
    public void call(NDArray... args) {
        kernel.call(args);
    }

    @Override
    public String source() {
        return kernel.source();
    }

    @Override
    public PrimFunc func() {
        return kernel.func();
    }

    @Override
    public Target target() {
        return kernel.target();
    }

    @Override
    public void close() {
        kernel.close();
    }
}
