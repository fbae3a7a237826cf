package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Freezes the capture evidence of one attempt (topic {@code rollout.token-capture}, key
 * {@code run_id/attempt/!freeze}). The snapshot is every entry of the attempt applied before this
 * record; later entries are refused and mark the attempt incomplete.
 */
public record FreezeCommand(
        Integer schemaVersion,
        String runId,
        String attempt,
        String snapshotId,
        String requestedBy,
        long ts,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public FreezeCommand {
        extra = Extras.mutable(extra);
    }
}
