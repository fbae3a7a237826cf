package dev.rolloutfleet.worker.internal;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/** What the worker holds for one owned request partition. Confined to the consumer thread. */
final class PartitionState {

    final TopicPartition partition;
    /** Null until the starting offset is known (no commit yet and no record seen). */
    InflightLedger ledger;
    final ArrayDeque<RolloutTask> queued = new ArrayDeque<>();
    /** Tasks holding an in-flight slot: running their rollout. */
    final Map<Long, RolloutTask> running = new HashMap<>();
    /** Tasks whose rollout ended and whose outputs await the broker's acknowledgement. */
    final Map<Long, RolloutTask> publishing = new HashMap<>();
    boolean paused;
    boolean revoking;
    /** The ledger changed since the last commit. */
    boolean dirty;
    /** The offset last committed, to report records consumed but not yet committed. */
    long lastCommitted = -1;

    PartitionState(TopicPartition partition, InflightLedger ledger) {
        this.partition = partition;
        this.ledger = ledger;
    }
}
