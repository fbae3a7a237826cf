package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Says that one rollout's record is on disk (topic {@code rollout.durable}, key {@code run_id}):
 * the segment file, the byte offset of its line, and whether the sample is masked. Published only
 * after the line is fsynced and the results offset committed.
 */
public record DurablePointer(
        Integer schemaVersion,
        String runId,
        String attempt,
        RolloutStatus status,
        String file,
        long byteOffset,
        int resultsPartition,
        long resultsOffset,
        boolean masked,
        String maskReason,
        String collector,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public DurablePointer {
        extra = Extras.mutable(extra);
    }
}
