package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Asks every worker to end a rollout (topic {@code rollout.control}, key {@code run_id}). A running
 * rollout stops at its next op with {@code status=aborted}; one not yet started finishes at once as
 * aborted.
 */
public record AbortCommand(
        Integer schemaVersion,
        String runId,
        String reason,
        long ts,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public AbortCommand {
        extra = Extras.mutable(extra);
    }

    public AbortCommand(String runId, String reason, long ts) {
        this(SchemaVersion.CURRENT, runId, reason, ts, null);
    }
}
