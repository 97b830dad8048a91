package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;

/**
 * The graph-level optimisations that run before fusion, in order: {@link FoldBatchNorm} (batch
 * norm into the conv/dense weights and a bias), {@link SimplifyInference} (the remaining batch norms
 * into a multiply and an add), {@link FoldConstants} (everything that depends only on weights),
 * {@link RemoveIdentities}, and the removal of whatever no output needs. Each is a pure
 * {@code Graph -> Graph} function; the result computes what the input does (tests check it with
 * {@code ReferenceExecutor}).
 */
public final class GraphPasses {
    private GraphPasses() {}

    public static Graph optimize(Graph g) {
        Graph r = FoldBatchNorm.apply(g);
        r = SimplifyInference.apply(r);
        r = FoldConstants.apply(r);
        r = RemoveIdentities.apply(r);
        return new GraphEditor(r).build();
    }
}
