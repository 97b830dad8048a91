package dev.kiln.autoschedule;

import dev.kiln.te.CanonicalText;
import dev.kiln.te.ComputeDAG;

/**
 * The structural key of a task: its computation with the shapes abstracted, for schedule transfer between
 * the similar tasks of a network ({@link dev.kiln.autoschedule.transfer.ScheduleTransfer}). It hashes the DAG's
 * {@linkplain CanonicalText.Mode#STRUCTURE structure text} (the workload key's canonical text with every extent and
 * integer constant replaced by {@code #} and every placeholder reduced to its dtype and rank): the same operators in
 * the same fusion pattern, the same stages with the same numbers of space and reduction axes, the same dtypes and the
 * same expression trees. Two conv2d + bias + relu of different H/W/C (or strides, kernel sizes and paddings that keep
 * the index expressions' form) share a key; a conv and a dense do not (different stages and axes), nor a conv with
 * and without its padding stage. Steps name stages and loops by index, so a program of one task replays on another of
 * the same key; only its tile sizes need refitting. The target and the layout-free argument positions are part of the
 * key.
 */
public final class StructureKey {
    private StructureKey() {}

    /** The structural key of a task: {@code "struct-" + hex} over {@link #canonical}, the target and layout. */
    public static String of(SearchTask task) {
        return CanonicalText.digest(
                "struct-",
                canonical(task.dag()) + "\ntarget " + task.targetDescription() + "\nlayout_free " + task.layoutFree());
    }

    /** The canonical text of a DAG with its shapes and integer constants abstracted (see the class comment). */
    public static String canonical(ComputeDAG dag) {
        return CanonicalText.of(dag, CanonicalText.Mode.STRUCTURE);
    }
}
