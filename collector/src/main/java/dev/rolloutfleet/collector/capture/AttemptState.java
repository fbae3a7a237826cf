package dev.rolloutfleet.collector.capture;

import java.util.List;
import java.util.Map;

/**
 * What the capture topic says about one {@code (run_id, attempt)}. {@code entries} maps each
 * accepted call id to a hash of its content; {@code marks} maps each incomplete cause to its
 * reason. The {@code pending*} fields are records this state obliges the collector to publish
 * (marks detected, a matched retire, tombstones of retired evidence); they are cleared when the
 * published records come back from the topic, and re-published after a restore.
 */
public record AttemptState(
        Status status,
        long version,
        String snapshotId,
        Map<String, Long> entries,
        Map<String, String> marks,
        long retiredAtMs,
        Map<String, String> pendingMarks,
        RetireMatch pendingRetire,
        List<String> pendingTombstones) {

    public enum Status { OPEN, FROZEN, RETIRED }

    /** A retire request that matched the frozen snapshot; the {@code !retired} marker is owed. */
    public record RetireMatch(String snapshotId, long version) {}

    public static AttemptState open() {
        return new AttemptState(Status.OPEN, 0, null, Map.of(), Map.of(), 0, Map.of(), null, List.of());
    }

    public boolean incomplete() {
        return !marks.isEmpty();
    }
}
