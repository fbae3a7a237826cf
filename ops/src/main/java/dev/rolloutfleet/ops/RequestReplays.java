package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.worker.rollout.RolloutSeeds;

/**
 * Turns an original request into its replay. A replay under a new run id keeps everything that
 * decides what the rollout does (env, policy, ops, seed) and says where it came from in
 * {@code metadata}; the seed is pinned, because an absent {@code env.seed} is derived from the run id.
 */
final class RequestReplays {

    static final String REPLAY_OF = "replay_of";
    static final String REPLAY_BATCH = "replay_batch";
    static final String REPLAY_SOURCE = "replay_source";

    private RequestReplays() {}

    /** The replay's run id (and group id, so GRPO groups stay whole but apart from the originals). */
    static String replayId(String id, String batch) {
        return id + ".replay-" + batch;
    }

    static RolloutRequest replay(RolloutRequest original, String batch, boolean sameIds, String source) {
        ObjectNode metadata = original.metadata() == null ? Json.object() : original.metadata().deepCopy();
        metadata.put(REPLAY_OF, original.runId()).put(REPLAY_BATCH, batch).put(REPLAY_SOURCE, source);
        String runId = sameIds ? original.runId() : replayId(original.runId(), batch);
        String groupId = sameIds || original.groupId() == null || original.groupId().isEmpty()
                ? original.groupId() : replayId(original.groupId(), batch);
        RolloutRequest.EnvSpec env = original.env();
        if (env != null && env.seed() == null) {
            env = new RolloutRequest.EnvSpec(env.envName(), env.envId(), RolloutSeeds.seedOf(original), env.config(), env.extra());
        }
        return new RolloutRequest(original.schemaVersion(), runId, groupId, env, original.policy(), original.ops(),
                original.record(), original.onDone(), original.safety(), original.mode(), original.trainingSessionId(),
                original.policyVersion(), metadata, original.extra());
    }
}
