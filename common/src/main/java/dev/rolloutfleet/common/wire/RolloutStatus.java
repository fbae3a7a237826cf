package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How a rollout ended. */
public enum RolloutStatus {
    /** Ran to the end of its ops or its episode. */
    @JsonProperty("ok") OK,
    /** Started but could not finish: policy, environment, deadline; {@code error} says which. */
    @JsonProperty("failed") FAILED,
    /** Parsed but broke a rule of the contract; never started. */
    @JsonProperty("invalid") INVALID,
    /** Stopped by an abort command; carries the trajectory so far. */
    @JsonProperty("aborted") ABORTED
}
