package dev.kiln.target;

/**
 * A backend's parallel runtime as seen by code that calls many kernels back to back (a compiled
 * network). {@link #hold} keeps the runtime's threads polling for the next parallel loop instead
 * of going to sleep, until the matching {@link #release}: a run of kernels then pays no thread
 * wake-up between them (ONNX Runtime's threads spin the same way while a session runs), at the cost
 * of the waiting threads' cores while the hold lasts. {@link #sleeps} counts how often the
 * runtime's threads went to sleep, to see wake-ups in a profile. Holds nest and may be taken by
 * several threads at once.
 */
public interface WorkerPool {
    /** Takes a hold: waiting threads poll instead of sleeping until every hold is released. */
    void hold();

    /** Releases one hold taken by {@link #hold}. */
    void release();

    /** How many times the runtime's threads have slept (waited in the kernel) so far; -1 when not counted. */
    long sleeps();

    /** A runtime without threads to hold (a serial backend, or one that does not say). */
    WorkerPool NONE = new WorkerPool() {
        @Override
        public void hold() {}

        @Override
        public void release() {}

        @Override
        public long sleeps() {
            return -1;
        }

        @Override
        public String toString() {
            return "no worker pool";
        }
    };
}
