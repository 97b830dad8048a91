package dev.kiln.schedule;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Steps as JSON arrays in Ansor's record format: {@code ["SP", stage, iter, extent, [lengths], 1]},
 * {@code ["AN", stage, iter, annotation_code]}, {@code ["CA", stage, target, target_iter]}, ...
 * Undecided lengths are {@code null}; booleans are 0 or 1.
 */
public final class StepJson {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private StepJson() {}

    public static ArrayNode write(Step step) {
        ArrayNode a = F.arrayNode();
        switch (step) {
            case SplitStep s -> {
                a.add("SP").add(s.stageId()).add(s.iterId());
                if (s.extent() == null) a.add(0);
                else a.add(s.extent());
                ArrayNode l = a.addArray();
                for (Integer x : s.lengths())
                    if (x == null) l.addNull();
                    else l.add(x);
                a.add(s.innerToOuter() ? 1 : 0);
            }
            case FollowSplitStep s ->
                a.add("FSP").add(s.stageId()).add(s.iterId()).add(s.srcStepId()).add(s.nSplit());
            case FollowFusedSplitStep s -> {
                a.add("FFSP").add(s.stageId()).add(s.iterId());
                ArrayNode ids = a.addArray();
                s.srcStepIds().forEach(ids::add);
                a.add(s.level()).add(s.factorOrNparts() ? 1 : 0);
            }
            case FuseStep s -> {
                a.add("FU").add(s.stageId());
                ArrayNode ids = a.addArray();
                s.iterIds().forEach(ids::add);
            }
            case ReorderStep s -> {
                a.add("RE").add(s.stageId());
                ArrayNode ids = a.addArray();
                s.order().forEach(ids::add);
            }
            case ComputeAtStep s ->
                a.add("CA").add(s.stageId()).add(s.targetStageId()).add(s.targetIterId());
            case ComputeInlineStep s -> a.add("CI").add(s.stageId());
            case ComputeRootStep s -> a.add("CR").add(s.stageId());
            case CacheReadStep s -> {
                a.add("CHR").add(s.stageId()).add(s.scope());
                ArrayNode ids = a.addArray();
                s.readerStageIds().forEach(ids::add);
            }
            case CacheWriteStep s -> a.add("CHW").add(s.stageId()).add(s.scope());
            case RfactorStep s -> a.add("RF").add(s.stageId()).add(s.iterId()).add(s.factorIterId());
            case AnnotationStep s ->
                a.add("AN").add(s.stageId()).add(s.iterId()).add(s.annotation().code());
            case PragmaStep s -> a.add("PR").add(s.stageId()).add(s.iterId()).add(s.pragma());
            case StorageAlignStep s ->
                a.add("SA").add(s.stageId()).add(s.iterId()).add(s.factor()).add(s.offset());
            case StorageBlockStep s -> a.add("SB").add(s.stageId()).add(s.dim()).add(s.factor());
            case TensorizeStep s -> a.add("TS").add(s.stageId()).add(s.iterId()).add(s.intrinsic());
        }
        return a;
    }

    public static Step read(JsonNode a) {
        if (!a.isArray() || a.isEmpty() || !a.get(0).isTextual()) {
            throw new ScheduleException("a step record must be an array starting with its kind, got " + a);
        }
        String kind = a.get(0).asText();
        try {
            return switch (kind) {
                case "SP" -> {
                    List<Integer> lengths = new ArrayList<>();
                    for (JsonNode x : a.get(4)) lengths.add(x.isNull() ? null : x.intValue());
                    long ext = a.get(3).longValue();
                    yield new SplitStep(i(a, 1), i(a, 2), ext == 0 ? null : ext, lengths, i(a, 5) != 0);
                }
                case "FSP" -> new FollowSplitStep(i(a, 1), i(a, 2), i(a, 3), i(a, 4));
                case "FFSP" -> new FollowFusedSplitStep(i(a, 1), i(a, 2), ints(a.get(3)), i(a, 4), i(a, 5) != 0);
                case "FU" -> new FuseStep(i(a, 1), ints(a.get(2)));
                case "RE" -> new ReorderStep(i(a, 1), ints(a.get(2)));
                case "CA" -> new ComputeAtStep(i(a, 1), i(a, 2), i(a, 3));
                case "CI" -> new ComputeInlineStep(i(a, 1));
                case "CR" -> new ComputeRootStep(i(a, 1));
                case "CHR" -> new CacheReadStep(i(a, 1), a.get(2).asText(), ints(a.get(3)));
                case "CHW" -> new CacheWriteStep(i(a, 1), a.get(2).asText());
                case "RF" -> new RfactorStep(i(a, 1), i(a, 2), i(a, 3));
                case "AN" -> new AnnotationStep(i(a, 1), i(a, 2), IterAnnotation.fromCode(i(a, 3)));
                case "PR" -> new PragmaStep(i(a, 1), i(a, 2), a.get(3).asText());
                case "SA" -> new StorageAlignStep(i(a, 1), i(a, 2), i(a, 3), i(a, 4));
                case "SB" -> new StorageBlockStep(i(a, 1), i(a, 2), i(a, 3));
                case "TS" -> new TensorizeStep(i(a, 1), i(a, 2), a.get(3).textValue());
                default -> throw new ScheduleException("unknown step kind '" + kind + "' in " + a);
            };
        } catch (NullPointerException | ClassCastException e) {
            throw new ScheduleException("malformed " + kind + " step record " + a);
        }
    }

    private static int i(JsonNode a, int k) {
        JsonNode x = a.get(k);
        if (x == null || !x.isIntegralNumber())
            throw new ScheduleException("field " + k + " of step record " + a + " is not an integer");
        return x.intValue();
    }

    private static List<Integer> ints(JsonNode a) {
        if (a == null || !a.isArray()) throw new ScheduleException("expected an array of integers, got " + a);
        List<Integer> out = new ArrayList<>();
        for (JsonNode x : a) {
            if (!x.isIntegralNumber()) throw new ScheduleException("expected an integer, got " + x);
            out.add(x.intValue());
        }
        return out;
    }
}
