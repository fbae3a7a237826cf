package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Retires the frozen capture evidence of one attempt (topic {@code rollout.token-capture}, key
 * {@code run_id/attempt/!retire}). Conditional: applies only when the attempt is frozen with
 * exactly this {@code snapshot_id} and {@code version}; otherwise it deletes nothing.
 */
public record RetireCommand(
        Integer schemaVersion,
        String runId,
        String attempt,
        String snapshotId,
        long version,
        long ts,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public RetireCommand {
        extra = Extras.mutable(extra);
    }
}
