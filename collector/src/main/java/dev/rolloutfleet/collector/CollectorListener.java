package dev.rolloutfleet.collector;

import java.util.List;

/**
 * Moments of the collector's durable write path, in this order per batch, on its consumer
 * thread. Must return quickly; an exception thrown here is logged and ignored.
 */
public interface CollectorListener {

    CollectorListener NONE = new CollectorListener() {};

    /** The batch's new lines (one per run id) are on disk; offsets are not committed yet. */
    default void batchSynced(List<String> runIds) {}

    /** The batch's offsets are committed. */
    default void batchCommitted(List<String> runIds) {}

    /** Retires for these runs' frozen evidence are on the capture topic. */
    default void retiresPublished(List<String> runIds) {}
}
