package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * The token ids of one inference call of a participating agent (topic
 * {@code rollout.token-capture}, key {@code run_id/attempt/call_id}). {@code generation_logprobs}
 * has one value per generated token; {@code output} is the call's content and tool calls without
 * token arrays. {@code created_at} (epoch ms) is diagnostic only and never used for ordering.
 */
public record CaptureEntry(
        Integer schemaVersion,
        String runId,
        String attempt,
        String callId,
        String agent,
        String model,
        List<Integer> promptTokenIds,
        List<Integer> generationTokenIds,
        List<Double> generationLogprobs,
        ObjectNode output,
        Long createdAt,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public CaptureEntry {
        extra = Extras.mutable(extra);
    }
}
