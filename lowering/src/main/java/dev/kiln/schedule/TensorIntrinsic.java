package dev.kiln.schedule;

import dev.kiln.ir.KilnException;
import dev.kiln.ir.Reduce;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.Objects;

/**
 * A special instruction declared as data, for the {@link TensorizeStep tensorize} step: its
 * semantics as a small Kiln computation (the {@code pattern}: placeholders of the operand shapes
 * and dtypes, one reduction whose body the tensorized stage's body must match), the operand
 * layouts (the pattern's tensors are dense row-major, so the pattern fixes the element offset of
 * every operand at every point of the tile), the alignment of each operand's first element, and
 * the target features the instruction needs. The code that implements it is supplied per backend,
 * keyed by {@link #name()} (the LLVM backend's registry of CPU intrinsics; a CUDA one later).
 *
 * @param name        the key of the implementations and of the tensorize step's record
 * @param description one line for people: what it computes, with which instruction
 * @param kind        the kind of target it runs on
 * @param features    target features it needs ({@link CpuTarget#hasFeature}); all must be present
 * @param pattern     one output, a sum over reduce axes of the pattern inputs; the loop nest it
 *                    replaces is the output's spatial axes then its reduce axes, in that order
 * @param alignment   per operand (the pattern's inputs in order, then the output): the element
 *                    offset of the tile's first element must be a multiple of this (1: any)
 * @param strided     per operand: whether its rows may lie any fixed distance apart (a leading
 *                    dimension, like a Tensor Core fragment's {@code ldm}), each row contiguous as in
 *                    the pattern; that distance must then be a multiple of the operand's alignment.
 *                    Only for two-dimensional operands; the others are dense as in the pattern.
 *                    On a CUDA target a feature {@code sm_80} means compute capability 8.0 or newer.
 */
public record TensorIntrinsic(
        String name,
        String description,
        Target.Kind kind,
        List<String> features,
        ComputeDAG pattern,
        List<Integer> alignment,
        List<Boolean> strided) {

    /** An intrinsic whose operands are all dense, as in the pattern. */
    public TensorIntrinsic(
            String name,
            String description,
            Target.Kind kind,
            List<String> features,
            ComputeDAG pattern,
            List<Integer> alignment) {
        this(
                name,
                description,
                kind,
                features,
                pattern,
                alignment,
                java.util.Collections.nCopies(alignment.size(), false));
    }

    public TensorIntrinsic {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(kind, "kind");
        features = List.copyOf(features);
        Objects.requireNonNull(pattern, "pattern");
        alignment = List.copyOf(alignment);
        if (name.isEmpty() || !name.matches("[A-Za-z0-9_.]+")) {
            throw new KilnException("intrinsic name '" + name + "' must be letters, digits, '_' and '.'");
        }
        if (pattern.outputs().size() != 1 || !(pattern.outputs().get(0).op() instanceof ComputeOp op)) {
            throw new KilnException("intrinsic '" + name + "': the pattern must have one computed output");
        }
        if (pattern.ops().size() != pattern.inputs().size() + 1) {
            throw new KilnException("intrinsic '" + name + "': the pattern must be one computation of its inputs");
        }
        if (op.bodies().size() != 1
                || !(op.body() instanceof Reduce r)
                || !r.reducer().name().equals("sum")) {
            throw new KilnException("intrinsic '" + name + "': the pattern's output must be one sum reduction");
        }
        if (alignment.size() != pattern.inputs().size() + 1) {
            throw new KilnException("intrinsic '" + name + "': " + alignment.size() + " alignments for "
                    + (pattern.inputs().size() + 1) + " operands (inputs, then the output)");
        }
        for (int a : alignment) {
            if (a < 1) throw new KilnException("intrinsic '" + name + "': alignment " + a + " must be >= 1");
        }
        strided = List.copyOf(strided);
        if (strided.size() != alignment.size()) {
            throw new KilnException("intrinsic '" + name + "': " + strided.size() + " strided flags for "
                    + alignment.size() + " operands");
        }
        List<Tensor> ops = new java.util.ArrayList<>(pattern.inputs());
        ops.add(pattern.outputs().get(0));
        for (int k = 0; k < ops.size(); k++) {
            if (strided.get(k) && ops.get(k).shape().dims().size() != 2) {
                throw new KilnException("intrinsic '" + name + "': strided operand '"
                        + ops.get(k).name() + "' must be two-dimensional");
            }
        }
    }

    /** The pattern's computation. */
    public ComputeOp op() {
        return (ComputeOp) pattern.outputs().get(0).op();
    }

    /** The operands: the pattern's inputs in order, then its output. */
    public List<Tensor> operands() {
        List<Tensor> out = new java.util.ArrayList<>(pattern.inputs());
        out.add(pattern.outputs().get(0));
        return out;
    }

    /** The extents of the loops it replaces: the output's spatial axes, then its reduce axes. */
    public List<Long> loopExtents() {
        List<Long> out = new java.util.ArrayList<>();
        op().axes().forEach(a -> out.add(a.extent()));
        op().reduceAxes().forEach(a -> out.add(a.extent()));
        return out;
    }

    /** Whether {@code target} has every feature the instruction needs (never true for another kind). */
    public boolean availableOn(Target target) {
        if (target.kind() != kind) return false;
        return unavailableReason(target) == null;
    }

    /** Why {@code target} cannot run it, or null when it can. */
    public String unavailableReason(Target target) {
        if (target.kind() != kind) return "intrinsic '" + name + "' is for " + kind.tag() + " targets";
        if (target instanceof CpuTarget cpu) {
            List<String> missing =
                    features.stream().filter(f -> !cpu.hasFeature(f)).toList();
            if (!missing.isEmpty()) {
                return "intrinsic '" + name + "' needs CPU feature(s) " + missing + ", which target " + cpu.cpu()
                        + " lacks";
            }
        } else if (target instanceof dev.kiln.target.CudaTarget gpu) {
            for (String f : features) {
                if (!f.matches("sm_[0-9]+")) return "intrinsic '" + name + "' needs unknown GPU feature '" + f + "'";
                int need = Integer.parseInt(f.substring(3));
                if (gpu.computeCapability() < need) {
                    return "intrinsic '" + name + "' needs compute capability " + f + " or newer, which target "
                            + gpu.arch() + " lacks";
                }
            }
        } else if (!features.isEmpty()) {
            return "intrinsic '" + name + "' needs features " + features + " that target " + target + " cannot report";
        }
        return null;
    }

    @Override
    public String toString() {
        return name + " (" + description + ")";
    }
}
