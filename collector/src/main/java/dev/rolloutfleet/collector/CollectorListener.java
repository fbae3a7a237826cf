package dev.rolloutfleet.collector;

/**
 * Moments of the collector's durable write path, on its consumer thread. Must return quickly; an
 * exception thrown here is logged and ignored.
 */
public interface CollectorListener {

    CollectorListener NONE = new CollectorListener() {};

    /** A batch of {@code lines} new lines is on disk; its offsets are not committed yet. */
    default void batchSynced(int lines) {}

    /** The batch's offsets are committed. */
    default void batchCommitted(int lines) {}
}
