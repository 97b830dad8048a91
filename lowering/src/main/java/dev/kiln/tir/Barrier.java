package dev.kiln.tir;

/**
 * A barrier among the threads of a GPU block ({@code __syncthreads()}): every thread of the
 * block waits until all have reached it, so shared memory written before is visible after. The
 * interpreter runs thread-bound loops one after another, for which a barrier is a no-op.
 */
public record Barrier() implements Stmt {
    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
