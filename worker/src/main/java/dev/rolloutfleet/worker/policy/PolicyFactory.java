package dev.rolloutfleet.worker.policy;

import dev.rolloutfleet.common.wire.RolloutRequest;

/** Makes policies of one kind, named by {@code policy.policy_name}. Thread-safe. */
public interface PolicyFactory {

    String name();

    Policy create(RolloutRequest.PolicySpec spec, PolicyContext context) throws PolicyException;
}
