package dev.kiln.autoschedule.transfer;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.ClassPathOnly;
import dev.kiln.autoschedule.measure.FaultyBackend;
import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The small ResNet tuned with schedule transfer on the interpreter-backed test backend (programs checked against
 * the interpreter's reference by the measurer, rtol = atol = 1e-3): every task that starts after a similar one
 * has transferred programs, marked with their source, in its first round; every record is valid; the network
 * matches the reference run (float32, rtol = atol = 1e-4); a second tune on the log measures nothing.
 */
@ClassPathOnly
class TransferTuneTest {

    @Test
    void laterSimilarTasksStartFromTransferredPrograms(@TempDir Path dir) {
        Graph net = Models.resnet18(1, 32, 4, 10, 5);
        var target = FaultyBackend.TARGET;
        List<NetworkTask> tasks = Network.tasks(net, target);
        Path log = dir.resolve("transfer.jsonl");
        MeasureOptions fast = MeasureOptions.smoke();
        int perRound = 2;
        try (LocalMeasurer m = LocalMeasurer.of(target, fast);
                NDArray x = NDArray.random(FLOAT32, 11, 1, 32, 32, 3);
                NodeRunner ref = NodeRunner.interpreter()) {
            NetworkTuneOptions opts = NetworkTuneOptions.builder()
                    .trials(perRound * tasks.size())
                    .measuresPerRound(perRound)
                    .seed(4)
                    .logFile(log)
                    .measurer(m)
                    .policies(RandomSearchPolicy::forTask)
                    .transfer(true)
                    .build();
            NDArray expected = ReferenceExecutor.run(net, ref, x).getFirst();
            try (CompiledNetwork cn = Network.tune(net, target, opts);
                    NDArray y = cn.run(x)) {
                assertThat(cn.tuning().orElseThrow().deadTasks()).isEmpty();
                y.assertClose(expected, 1e-4, 1e-4);
            }
            List<LogRecord> records;
            try (TuningLog l = TuningLog.open(log)) {
                records = l.records();
            }
            assertThat(records).isNotEmpty().allSatisfy(r -> assertThat(r.errorKind())
                    .as(r.errorMessage())
                    .isEqualTo(LogRecord.NO_ERROR));
            Map<String, String> structureOf = tasks.stream()
                    .collect(Collectors.toMap(
                            t -> t.task().workloadKey(), t -> t.task().structureKey()));
            Set<String> seenStructures = new HashSet<>();
            int transferredTasks = 0;
            // the warm-up gives every task its first round in task order
            for (NetworkTask t : tasks) {
                String key = t.task().workloadKey();
                List<LogRecord> first = records.stream()
                        .filter(r -> r.workloadKey().equals(key))
                        .limit(perRound)
                        .toList();
                assertThat(first).hasSize(perRound);
                boolean hasEarlierSimilar = !seenStructures.add(t.task().structureKey());
                if (hasEarlierSimilar) {
                    transferredTasks++;
                    assertThat(first).as(t.description()).allSatisfy(r -> {
                        assertThat(r.isTransferred()).isTrue();
                        assertThat(structureOf.get(r.transferFrom()))
                                .isEqualTo(t.task().structureKey());
                        assertThat(r.transferFrom()).isNotEqualTo(key);
                    });
                } else {
                    assertThat(first)
                            .noneSatisfy(r -> assertThat(r.isTransferred()).isTrue());
                }
            }
            assertThat(transferredTasks).isGreaterThanOrEqualTo(5);
            TransferReport report = TransferReport.of(records);
            System.out.println(report.describe());
            assertThat(report.tasksSeeded()).isEqualTo(transferredTasks);
            assertThat(report.transferredTrials()).isEqualTo(perRound * transferredTasks);
            assertThat(report.validTransferred()).isEqualTo(report.transferredTrials());
            assertThat(report.tasks()).isEqualTo(tasks.size());
            assertThat(report.bestIsTransferred()).isBetween(0, transferredTasks);
            // the log keeps the mark across a round trip, and a resumed tune measures nothing
            try (CompiledNetwork again = Network.tune(net, target, opts)) {
                assertThat(again.tuning().orElseThrow().newTrials()).isZero();
            }
            expected.close();
        }
    }
}
