package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Marks one attempt's capture evidence incomplete for one cause (topic
 * {@code rollout.token-capture}, key {@code run_id/attempt/!incomplete:CAUSE}). Published by the
 * collector that detects the cause (an entry after the freeze, two entries with one
 * {@code call_id} and different content), so that a collector restoring the compacted topic reaches
 * the same state. {@code reason} is for people.
 */
public record IncompleteMark(
        Integer schemaVersion,
        String runId,
        String attempt,
        String cause,
        String reason,
        long ts,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public IncompleteMark {
        extra = Extras.mutable(extra);
    }
}
