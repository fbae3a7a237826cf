package dev.rolloutfleet.worker.policy;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Decides the next tool calls from an observation. One instance per rollout, called from that
 * rollout's thread only. May block (an HTTP call); must respond to interruption, which is how a
 * deadline or an abort cancels it.
 */
public interface Policy {

    /**
     * @param observation the environment's latest observation
     * @param decisionIndex 0 for the first decision of the rollout, then 1, 2, ...
     * @throws PolicyException when no decision can be had; the rollout ends {@code policy_step_failed}
     * @throws InterruptedException when the rollout is cancelled while deciding
     */
    Decision decide(ObjectNode observation, int decisionIndex) throws PolicyException, InterruptedException;
}
