package dev.rolloutfleet.worker.policy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.worker.capture.TokenCapture;
import java.util.List;

/** What a policy gets for one rollout: its seed, the environment's tools, and the attempt's token capture. */
public record PolicyContext(long seed, List<ObjectNode> tools, TokenCapture capture) {

    public static PolicyContext of(long seed) {
        return new PolicyContext(seed, List.of(), TokenCapture.none(null));
    }
}
