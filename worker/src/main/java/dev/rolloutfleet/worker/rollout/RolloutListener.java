package dev.rolloutfleet.worker.rollout;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Notable moments of one rollout attempt, in order, on the rollout's thread. Trace publishing and
 * metrics are listeners. Methods must not block for long; an exception thrown by a listener is
 * caught and logged by the runner and never fails the rollout.
 */
public interface RolloutListener {

    RolloutListener NONE = new RolloutListener() {};

    default void rolloutStarted(ObjectNode payload) {}

    default void decisionStarted(ObjectNode payload) {}

    /** One inference call: model, usage, latency, retries, finish reason. Never the API key. */
    default void lmCall(ObjectNode payload) {}

    default void envStep(ObjectNode payload) {}

    /** The step reward of a decision, when step rewards are active. */
    default void decisionReward(ObjectNode payload) {}

    default void rolloutFinished(ObjectNode payload) {}
}
