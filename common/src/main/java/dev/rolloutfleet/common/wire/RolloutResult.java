package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one attempt of a rollout (topic {@code rollout.results}, key {@code run_id}).
 * The collector writes it, possibly enriched with a rebuilt token trajectory, as one durable line.
 */
public record RolloutResult(
        Integer schemaVersion,
        String runId,
        String attempt,
        String groupId,
        RolloutStatus status,
        RolloutError error,
        Boolean aborted,
        List<Trajectory> trajectories,
        RolloutMetrics metrics,
        Integer opsExecuted,
        ObjectNode timing,
        WorkerInfo worker,
        String policyVersion,
        CaptureInfo capture,
        @JsonAnySetter @JsonAnyGetter Map<String, JsonNode> extra) {

    public RolloutResult {
        extra = Extras.mutable(extra);
    }

    /** Why a rollout did not end {@code ok}: a stable code and a message for people. */
    public record RolloutError(String code, String message) {}

    /**
     * One episode-spanning trajectory of one environment and one policy. {@code decision_samples}
     * (one per decision) is present when step rewards are active.
     */
    public record Trajectory(
            String envId,
            String policyId,
            List<Step> steps,
            @JsonProperty("final") ObjectNode finalObservation,
            Integer length,
            List<JsonNode> decisionSamples) {}

    /** One environment step: what the agent saw, what it did, and what it got. */
    public record Step(
            ObjectNode obs,
            List<JsonNode> toolCalls,
            Double reward,
            Boolean done,
            Boolean truncated,
            ObjectNode info) {}

    /** Returns and counts over the whole rollout; {@code details} holds e.g. {@code stepwise}. */
    public record RolloutMetrics(
            List<Double> episodeReturns,
            Double meanReturn,
            Integer numSteps,
            Integer numEpisodes,
            ObjectNode details) {}

    /** Which worker ran the attempt, and from which request record. */
    public record WorkerInfo(String id, Integer partition, Long offset) {}

    /**
     * The token-capture evidence this attempt wrote: the calls, whether the attempt is complete,
     * and the capture-topic position of its last entry, which the collector waits for.
     */
    public record CaptureInfo(
            String agent,
            Boolean participating,
            List<String> callIds,
            Boolean incomplete,
            List<String> reasons,
            Watermark watermark) {}

    /** A position in the token-capture topic. */
    public record Watermark(int partition, long offset) {}
}
