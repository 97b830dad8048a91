package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ansor's MutateTileSize: moves a factor between two levels of one split. A split with a known
 * extent and decided lengths is picked at random (retrying up to 4 times the number of splits to
 * find one whose extent is more than 1); over its levels {@code [outer, l1..ln]} (outer =
 * extent / product) taken in a random order, the first level with length above 1 gives a random
 * divisor above 1 to the next level in that order, the innermost level never growing past
 * {@code maxInnermostSplitFactor}. Follow-splits follow when the steps are replayed. Kiln's
 * addition: a split whose innermost tile leaves a tail (a register tile of
 * {@code RegisterTileSizes.tailCandidates}) keeps that tile, and the factor moves between its
 * other levels, which split the {@code ceil(extent / inner)} innermost tiles (Ansor never
 * samples such splits).
 */
public record MutateTileSize() implements MutationRule {
    @Override
    public String name() {
        return "MutateTileSize";
    }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        List<Step> steps = parent.schedule().steps();
        int maxInner = task.hardware().maxInnermostSplitFactor();
        List<Integer> splits = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) instanceof SplitStep sp
                    && sp.extent() != null
                    && sp.isConcrete()
                    && sp.innerToOuter()
                    && sp.lengths().getLast() <= maxInner) splits.add(i);
        }
        if (splits.isEmpty()) return null;
        for (int tries = 0; tries < 4 * splits.size(); tries++) {
            int at = splits.get(rng.nextInt(splits.size()));
            SplitStep sp = (SplitStep) steps.get(at);
            int inner = sp.lengths().getLast();
            // a register tile with a tail (RegisterTileSizes.tailCandidates) keeps its innermost
            // tile; the other levels split the ceil(extent / inner) innermost tiles it covers
            boolean tail = sp.extent() % inner != 0;
            long over = tail ? (sp.extent() + inner - 1) / inner : sp.extent();
            int n = tail ? sp.lengths().size() - 1 : sp.lengths().size();
            long prod = 1;
            for (int k = 0; k < n; k++) prod *= sp.lengths().get(k);
            if (n == 0 || over <= 1 || over % prod != 0) continue;
            long[] len = new long[n + 1];
            len[0] = over / prod;
            for (int k = 0; k < n; k++) len[k + 1] = sp.lengths().get(k);
            int[] order = permutation(n + 1, rng);
            for (int k = 0; k <= n; k++) {
                int src = order[k], dst = order[(k + 1) % (n + 1)];
                if (len[src] <= 1) continue;
                List<Long> divisors = new ArrayList<>();
                for (long d = 2; d <= len[src]; d++) {
                    if (len[src] % d != 0) continue;
                    if (!tail && dst == n && len[dst] * d > maxInner) continue;
                    divisors.add(d);
                }
                if (divisors.isEmpty()) continue;
                long d = divisors.get(rng.nextInt(divisors.size()));
                len[src] /= d;
                len[dst] *= d;
                List<Integer> lengths = new ArrayList<>();
                for (int q = 1; q <= n; q++) lengths.add(Math.toIntExact(len[q]));
                if (tail) lengths.add(inner);
                List<Step> out = new ArrayList<>(steps);
                out.set(at, sp.withLengths(lengths));
                return Children.of(task, out);
            }
            return null;
        }
        return null;
    }

    private static int[] permutation(int n, SplittableRandom rng) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) p[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
