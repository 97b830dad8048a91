package dev.kiln.schedule;

import java.util.List;
import java.util.stream.Collectors;

/** Prints a schedule as Java source that rebuilds it with {@link ScheduleBuilder}. */
final class JavaSourcePrinter {
    private JavaSourcePrinter() {}

    static String print(Schedule schedule) {
        StringBuilder sb = new StringBuilder("ScheduleBuilder s = ScheduleBuilder.on(dag);\n");
        LoopState state = LoopState.initial(schedule.dag());
        for (Step step : schedule.steps()) {
            sb.append(line(state, step)).append('\n');
            state = state.apply(step);
        }
        return sb.append("Schedule schedule = s.build();\n").toString();
    }

    private static String q(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    private static String loop(LoopState s, int stage, int iter) {
        return q(s.stage(stage).iter(iter).name());
    }

    private static String ints(List<Integer> xs) {
        return xs.stream().map(x -> x == null ? "null" : x.toString()).collect(Collectors.joining(", "));
    }

    private static String line(LoopState s, Step step) {
        String st = "s.stage(" + q(s.stage(step.stageId()).name()) + ")";
        return st
                + switch (step) {
                    case SplitStep x ->
                        (x.innerToOuter() ? ".split(" : ".splitParts(") + loop(s, x.stageId(), x.iterId()) + ", "
                                + ints(x.lengths()) + ");";
                    case FollowSplitStep x ->
                        ".followSplit(" + loop(s, x.stageId(), x.iterId()) + ", " + x.srcStepId() + ", " + x.nSplit()
                                + ");";
                    case FollowFusedSplitStep x ->
                        ".followFusedSplit(" + loop(s, x.stageId(), x.iterId()) + ", java.util.List.of("
                                + ints(x.srcStepIds()) + "), " + x.level() + ", " + x.factorOrNparts() + ");";
                    case FuseStep x ->
                        ".fuse("
                                + x.iterIds().stream()
                                        .map(i -> loop(s, x.stageId(), i))
                                        .collect(Collectors.joining(", "))
                                + ");";
                    case ReorderStep x ->
                        ".reorder("
                                + x.order().stream()
                                        .map(i -> loop(s, x.stageId(), i))
                                        .collect(Collectors.joining(", ")) + ");";
                    case ComputeAtStep x ->
                        ".computeAt(" + q(s.stage(x.targetStageId()).name()) + ", "
                                + loop(s, x.targetStageId(), x.targetIterId()) + ");";
                    case ComputeInlineStep x -> ".computeInline();";
                    case ComputeRootStep x -> ".computeRoot();";
                    case CacheReadStep x ->
                        ".cacheRead(" + q(x.scope()) + ", "
                                + x.readerStageIds().stream()
                                        .map(r -> q(s.stage(r).name()))
                                        .collect(Collectors.joining(", "))
                                + ");";
                    case CacheWriteStep x -> ".cacheWrite(" + q(x.scope()) + ");";
                    case RfactorStep x ->
                        ".rfactor(" + loop(s, x.stageId(), x.iterId()) + ", " + x.factorIterId() + ");";
                    case AnnotationStep x ->
                        switch (x.annotation()) {
                            case PARALLEL -> ".parallel(" + loop(s, x.stageId(), x.iterId()) + ");";
                            case VECTORIZE -> ".vectorize(" + loop(s, x.stageId(), x.iterId()) + ");";
                            case UNROLL -> ".unroll(" + loop(s, x.stageId(), x.iterId()) + ");";
                            default ->
                                ".bind(" + loop(s, x.stageId(), x.iterId()) + ", "
                                        + q(x.annotation().displayName()) + ");";
                        };
                    case PragmaStep x -> ".pragma(" + loop(s, x.stageId(), x.iterId()) + ", " + q(x.pragma()) + ");";
                    case StorageAlignStep x ->
                        ".storageAlign(" + x.iterId() + ", " + x.factor() + ", " + x.offset() + ");";
                    case StorageBlockStep x -> ".storageBlock(" + x.dim() + ", " + x.factor() + ");";
                    case TensorizeStep x ->
                        ".tensorize(" + loop(s, x.stageId(), x.iterId()) + ", " + q(x.intrinsic()) + ");";
                };
    }
}
