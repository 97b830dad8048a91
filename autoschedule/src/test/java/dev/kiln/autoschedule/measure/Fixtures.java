package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.SplitStep;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/** Workloads, schedules and deliberately broken programs for the measurement tests. */
final class Fixtures {
    private Fixtures() {}

    static SearchTask task(ComputeDAG dag, Target target) {
        return SearchTask.of(dag, target, HardwareParams.cpu(2, 32, 64));
    }

    /** A tiled, vectorized, parallel matmul schedule (the output stage is the DAG's last). */
    static Schedule tiled(ComputeDAG dag, int tileI, int tileJ) {
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        var c = sb.stage(dag.outputs().getFirst());
        var loops = c.loops();
        var i = c.split(loops.get(0), tileI);
        var j = c.split(loops.get(1), tileJ);
        c.reorder(i.get(0), j.get(0), loops.get(2), i.get(1), j.get(1));
        c.parallel(i.get(0));
        c.vectorize(j.get(1));
        return sb.build();
    }

    /** A schedule whose step cannot apply: a split of a stage that does not exist. */
    static Schedule illegal(ComputeDAG dag) {
        return new Schedule(dag, List.of(new SplitStep(99, 0, null, List.of(4), true)));
    }

    /** A CPU schedule with a loop bound to threadIdx.x, which the LLVM backend refuses to compile. */
    static Schedule threadBound(ComputeDAG dag) {
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        var c = sb.stage(dag.outputs().getFirst());
        c.bind(c.loops().get(0), "threadIdx.x");
        return sb.build();
    }

    /** The program plus a store of a wrong value into the first element of its last parameter. */
    static PrimFunc wrongFirstElement(PrimFunc f) {
        Buffer out = f.params().getLast().flatView();
        return f.withBody(Seq.of(f.body(), new Store(out, List.of(IntImm.i32(0)), FloatImm.f32(1234.5))));
    }

    /**
     * The program plus a store far outside every mapping (2^62 bytes past its output: a
     * non-canonical address on x86-64), which faults in the generated code.
     */
    static PrimFunc storeOutOfBounds(PrimFunc f) {
        Buffer out = f.params().getLast().flatView();
        return f.withBody(Seq.of(f.body(), new Store(out, List.of(IntImm.i64(1L << 60)), FloatImm.f32(1))));
    }

    /**
     * A lowerer that lowers normally and then applies the edit registered for that schedule
     * object, if any (schedules are records, so they are told apart by identity).
     */
    static final class EditingLowerer implements ScheduleLowerer {
        private final Map<Schedule, UnaryOperator<PrimFunc>> edits = new IdentityHashMap<>();

        /** A fresh default schedule of {@code dag} whose program {@code edit} changes. */
        Schedule edited(ComputeDAG dag, UnaryOperator<PrimFunc> edit) {
            Schedule s = Schedule.empty(dag);
            edits.put(s, edit);
            return s;
        }

        Schedule fault(ComputeDAG dag, FaultyBackend.Fault fault) {
            return edited(dag, f -> FaultyBackend.withFault(f, fault));
        }

        @Override
        public PrimFunc lower(SearchTask task, Schedule schedule) {
            PrimFunc f = Lowering.lower(FUNCTION_NAME, schedule);
            UnaryOperator<PrimFunc> e = edits.get(schedule);
            return e == null ? f : e.apply(f);
        }
    }

    /** Deletes a directory the tests made (a measurer's temporary directory with its crash logs). */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    static ComputeDAG matmul(long n, long m, long k) {
        return Workloads.matmul(n, m, k);
    }
}
