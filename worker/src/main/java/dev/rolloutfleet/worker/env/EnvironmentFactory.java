package dev.rolloutfleet.worker.env;

import dev.rolloutfleet.common.wire.RolloutRequest;

/** Makes environment instances of one kind, named by {@code env.env_name}. Thread-safe. */
public interface EnvironmentFactory {

    /** The {@code env_name} this factory serves. */
    String name();

    /** A new instance for one rollout, seeded for determinism. */
    Environment create(RolloutRequest.EnvSpec spec, long seed) throws EnvironmentException;
}
