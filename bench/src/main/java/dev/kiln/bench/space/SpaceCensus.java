package dev.kiln.bench.space;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.InitFillTileSize;
import dev.kiln.autoschedule.annotate.InitKBlocking;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.annotate.InitRule;
import dev.kiln.autoschedule.annotate.KBlocking;
import dev.kiln.autoschedule.annotate.ReductionTileSizes;
import dev.kiln.autoschedule.annotate.RegisterTileSizes;
import dev.kiln.autoschedule.evolution.EvolutionOptions;
import dev.kiln.autoschedule.log.LogFormat;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.ir.IterVar;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * How often a GEMM search draws what GEMM 1024's fastest hand schedules have (issue 13; GemmStudy, quiet,
 * 2026-12-02): the cache-write sketch at fusion level 1, B packed, K-blocked, a reduction block of 128-384
 * and a register tile that fits the vector registers. Counts each trait and all of them together over the
 * initial population of Kiln's CPU rules (as {@code space-bench} samples it) and over the programs of
 * tuning logs, without timing anything.
 *
 * <pre>SpaceCensus [n] [samples] [seed] [log.jsonl ...]</pre>
 * (defaults 1024, 2048 (the evolutionary search's population), 7). A log argument {@code search:TRIALS:FILE} first
 * tunes GEMM n in Kiln's space for that many trials into FILE ({@code space-bench}'s policy and seed; the log
 * resumes), then counts it: a smoke run of what the search measures, its timings not meant to be read.
 */
public final class SpaceCensus {
    private SpaceCensus() {}

    /**
     * What one GEMM program draws: where the cache write is computed ({@code L1}: at the output's level-0
     * tile, {@code L2}: at its level-1 tile, {@code root}: no cache write), which operands are packed, whether
     * the tiled stage is K-blocked, its reduction block and whether its register tile fits.
     */
    public record Traits(String sketch, boolean packA, boolean packB, boolean kBlocked, long kc, boolean registerTile) {
        /** Whether the program has all the traits of the fastest hand schedules. */
        public boolean fast() {
            return sketch.equals("L1")
                    && packB
                    && kBlocked
                    && kc >= ReductionTileSizes.KC_MIN
                    && kc <= ReductionTileSizes.KC_MAX
                    && registerTile;
        }
    }

    /** The traits of a concrete GEMM program (null when it has no multi-level-tiled reduction). */
    public static Traits of(HardwareParams hw, LoopState s) {
        int tiled = -1;
        for (int id = 0; id < s.stages().size() && tiled < 0; id++) {
            Stage st = s.stage(id);
            if (!st.isPlaceholder() && StagePredicates.hasReduceIter(st) && st.isTiled()) tiled = id;
        }
        if (tiled < 0) return null;
        Stage st = s.stage(tiled);
        String sketch = "root";
        if (st.computeAt() == ComputeAtKind.ITER && st.name().endsWith(".local")) {
            Stage at = s.stage(st.attachStage());
            String loop = at.iter(at.indexOfUid(st.attachIter())).name();
            int level = 0; // a fused loop (i.0@j.0@) is at the deepest level of its parts
            for (String part : loop.split("@"))
                if (part.contains("."))
                    level = Math.max(level, Integer.parseInt(part.substring(part.lastIndexOf('.') + 1)));
            sketch = "L" + (level + 1);
        }
        boolean packA = false, packB = false;
        for (int id : s.attachedTo(tiled)) {
            String name = s.stage(id).name();
            packA |= name.startsWith("A.");
            packB |= name.startsWith("B.");
        }
        long total = 1, outer = 1;
        for (IterVar k : st.computeOp().reduceAxes()) total *= k.extent();
        long rows = 1, vector = 0;
        List<Integer> spatialInner = new ArrayList<>();
        for (int i = 0; i < st.iters().size(); i++) {
            var it = st.iter(i);
            int dot = it.name().lastIndexOf('.');
            String level = dot < 0 ? "" : it.name().substring(dot + 1);
            if (it.kind() == IterKind.REDUCE && level.equals("0") && it.extent() != null) outer *= it.extent();
            if (it.kind() == IterKind.SPATIAL && level.equals("3")) spatialInner.add(i);
        }
        for (int k = 0; k < spatialInner.size(); k++) {
            Long e = st.iter(spatialInner.get(k)).extent();
            if (e == null) continue;
            if (k == spatialInner.size() - 1) vector = e;
            else rows *= e;
        }
        int lanes = hw.lanes(4);
        boolean fits = vector % lanes == 0 && RegisterTileSizes.fits(hw, rows, vector / lanes);
        return new Traits(sketch, packA, packB, KBlocking.isBlocked(s, tiled), total / outer, fits);
    }

    /** Counts of traits over a list of programs, printed as one table row. */
    static String row(String what, List<Traits> ts) {
        int n = ts.size();
        long l1 = ts.stream().filter(t -> t.sketch().equals("L1")).count();
        long packB = ts.stream().filter(Traits::packB).count();
        long packA = ts.stream().filter(Traits::packA).count();
        long kb = ts.stream().filter(Traits::kBlocked).count();
        long kc = ts.stream()
                .filter(t -> t.kc() >= ReductionTileSizes.KC_MIN && t.kc() <= ReductionTileSizes.KC_MAX)
                .count();
        long reg = ts.stream().filter(Traits::registerTile).count();
        long l1PackBKb = ts.stream()
                .filter(t -> t.sketch().equals("L1") && t.packB() && t.kBlocked())
                .count();
        long fast = ts.stream().filter(Traits::fast).count();
        return String.format(
                Locale.ROOT,
                "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |",
                what,
                n,
                pct(l1, n),
                pct(packB, n),
                pct(packA, n),
                pct(kb, n),
                pct(kc, n),
                pct(reg, n),
                pct(l1PackBKb, n),
                fast + " (" + pct(fast, n) + ")");
    }

    private static String pct(long k, int n) {
        return n == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100.0 * k / n);
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1024;
        int samples = args.length > 1
                ? Integer.parseInt(args[1])
                : EvolutionOptions.defaults().population();
        long seed = args.length > 2 ? Long.parseLong(args[2]) : 7;
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        ComputeDAG dag = GemmStudy.gemm(n);
        SearchTask task = SearchTask.of(dag, target);
        System.out.println("| programs | n | L1 cache write | B packed | A packed | K-blocked | KC 128-384 "
                + "| register tile fits | L1+packB+K-blocked | all five |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        TargetRules rules = TargetRules.cpu();
        for (boolean before : new boolean[] {true, false}) {
            // before issue 13's fifth round of rules: no reduction blocks above 64, K-blocking for half the stages
            var fill = new InitFillTileSize(
                    new FactorizationMemo(),
                    InitFillTileSize.DEFAULT_REGISTER_TILE_PROBABILITY,
                    InitFillTileSize.DEFAULT_TAIL_PROBABILITY,
                    before ? 0 : InitFillTileSize.DEFAULT_REDUCTION_BLOCK_PROBABILITY);
            List<InitRule> init = new ArrayList<>(rules.initRules());
            if (before) init.replaceAll(r -> r instanceof InitKBlocking ? new InitKBlocking(0.5) : r);
            var sampler = new InitPopulation(
                    task, rules.sketches(task), init, fill, InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
            List<Traits> drawn = new ArrayList<>();
            for (Candidate c :
                    sampler.sample(samples, new SplittableRandom(seed)).candidates()) {
                Traits t = of(task.hardware(), c.state());
                if (t != null) drawn.add(t);
            }
            String what = before ? "KC <= 64, K-blocking 0.5 (before)" : "Kiln's CPU rules (now)";
            System.out.println(row("initial population, " + what + ", seed " + seed, drawn));
        }
        for (int a = 3; a < args.length; a++) {
            Path log = Path.of(args[a]);
            if (args[a].startsWith("search:")) {
                String[] parts = args[a].split(":", 3);
                log = Path.of(parts[2]);
                if (log.getParent() != null) Files.createDirectories(log.getParent());
                TuneOptions opts = TuneOptions.builder()
                        .trials(Integer.parseInt(parts[1]))
                        .seed(seed)
                        .progressBar(false)
                        .logFile(log)
                        .policy((t, sd) -> SpaceBench.policy(t, sd, true))
                        .build();
                try (TuneResult r = AutoSchedule.tune(dag, target, opts)) {
                    System.out.println("search: " + r.summary());
                }
            }
            List<Traits> all = new ArrayList<>();
            for (String line : Files.readAllLines(log)) {
                if (line.isBlank()) continue;
                LogRecord r = LogFormat.parse(line);
                if (r.isRemeasure()) continue;
                Traits t = of(task.hardware(), Candidate.of(r.schedule(dag)).state());
                if (t == null) continue;
                all.add(t);
            }
            System.out.println(row("measured, " + log, all));
        }
    }
}
