package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/**
 * One notable moment of one attempt (topic {@code rollout.traces}, key {@code run_id}). {@code seq}
 * orders the events of an attempt; {@code ts} is epoch milliseconds on the worker's clock.
 */
public record TraceEvent(
        Integer schemaVersion,
        String runId,
        String attempt,
        long seq,
        String type,
        long ts,
        ObjectNode payload,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public static final String ROLLOUT_STARTED = "rollout_started";
    public static final String DECISION_STARTED = "decision_started";
    public static final String LM_CALL = "lm_call";
    public static final String ENV_STEP = "env_step";
    public static final String DECISION_REWARD = "decision_reward";
    public static final String ROLLOUT_FINISHED = "rollout_finished";

    public TraceEvent {
        extra = Extras.mutable(extra);
    }

    public TraceEvent(String runId, String attempt, long seq, String type, long ts, ObjectNode payload) {
        this(SchemaVersion.CURRENT, runId, attempt, seq, type, ts, payload, null);
    }
}
