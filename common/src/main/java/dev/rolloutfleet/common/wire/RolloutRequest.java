package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * A trainer's request for one rollout (topic {@code rollout.requests}). Only {@code run_id} is
 * required on the wire; {@link RequestValidator} checks the rest. Fields this build does not know
 * are kept in {@link #extra()} and written back unchanged, so a newer trainer's fields survive a
 * replay through an older worker.
 */
public record RolloutRequest(
        Integer schemaVersion,
        String runId,
        String groupId,
        EnvSpec env,
        PolicySpec policy,
        List<String> ops,
        RecordSpec record,
        String onDone,
        SafetySpec safety,
        String mode,
        String trainingSessionId,
        String policyVersion,
        ObjectNode metadata,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public static final String ON_DONE_RESET = "reset";
    public static final String ON_DONE_TERMINATE = "terminate";

    public RolloutRequest {
        extra = Extras.mutable(extra);
    }

    /** The Kafka key of this request: its group when it has one (GRPO groups share a partition), else its run. */
    public String kafkaKey() {
        return groupId != null && !groupId.isEmpty() ? groupId : runId;
    }

    /** The environment: name, instance id, seed and free-form config. */
    public record EnvSpec(
            String envName,
            String envId,
            Long seed,
            ObjectNode config,
            @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {
        public EnvSpec {
            extra = Extras.mutable(extra);
        }

        public EnvSpec(String envName, Long seed, ObjectNode config) {
            this(envName, null, seed, config, null);
        }
    }

    /** The policy: its name and free-form config (model, inference_url, temperature, step_rewards, ...). */
    public record PolicySpec(
            String policyName,
            ObjectNode config,
            @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {
        public PolicySpec {
            extra = Extras.mutable(extra);
        }

        public PolicySpec(String policyName, ObjectNode config) {
            this(policyName, config, null);
        }
    }

    /** What to record. Absent flags take the defaults of the seed task app. */
    public record RecordSpec(
            Boolean trajectories,
            Boolean logprobs,
            Boolean returnTrace,
            String traceFormat,
            @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {
        public RecordSpec {
            extra = Extras.mutable(extra);
        }

        public boolean recordsTrajectories() {
            return trajectories == null || trajectories;
        }
    }

    /** Limits that stop a runaway rollout. */
    public record SafetySpec(
            Integer maxOps,
            Double maxTimeS,
            @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {
        public static final int DEFAULT_MAX_OPS = 100_000;
        public static final double DEFAULT_MAX_TIME_S = 3600.0;

        public SafetySpec {
            extra = Extras.mutable(extra);
        }

        public SafetySpec(Integer maxOps, Double maxTimeS) {
            this(maxOps, maxTimeS, null);
        }
    }
}
