package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import org.junit.jupiter.api.Test;

class ResultDiffTest {

    private static final String RESULT = """
            {"run_id":"r1","attempt":"a1","status":"ok","ops_executed":2,
             "timing":{"duration_ms":12},"worker":{"id":"w1","partition":0,"offset":4},
             "metrics":{"episode_returns":[1.0],"mean_return":1.0,"num_steps":2,"num_episodes":1},
             "trajectories":[{"env_id":"corridor","policy_id":"scripted","length":2,"steps":[
               {"obs":{"pos":1},"tool_calls":[{"tool":"move","args":{"dir":"right"}}],"reward":0.0,"done":false,
                "info":{"meta":{"timing":{"inference_ms":3.5,"env_step_ms":0.2},"retries":0}}},
               {"obs":{"pos":2},"tool_calls":[{"tool":"move","args":{"dir":"right"}}],"reward":1.0,"done":true,
                "info":{"meta":{"timing":{"inference_ms":2.5}}}}]}]}
            """;

    @Test
    void whenAndWhereARunHappenedIsNotADifference() {
        ObjectNode replay = (ObjectNode) Json.mapper().valueToTree(Json.decode(RESULT, RolloutResult.class));
        replay.put("run_id", "r1.replay-x").put("attempt", "a9");
        replay.with("timing").put("duration_ms", 99);
        replay.with("worker").put("id", "w7");
        replay.at("/trajectories/0/steps/0/info/meta/timing").deepCopy();
        ((ObjectNode) replay.at("/trajectories/0/steps/0/info/meta")).put("retries", 2).with("timing").put("inference_ms", 80.0);
        ((ObjectNode) replay.at("/trajectories/0/steps/1")).put("reward", 1); // 1 and 1.0 are equal

        assertThat(ResultDiff.differences(result(RESULT), Json.decode(replay.toString(), RolloutResult.class))).isEmpty();
    }

    @Test
    void aDifferentRewardOrActionIsReportedWithItsPath() {
        ObjectNode replay = (ObjectNode) Json.mapper().valueToTree(result(RESULT));
        ((ObjectNode) replay.at("/trajectories/0/steps/1")).put("reward", 0.5);
        ((ObjectNode) replay.at("/trajectories/0/steps/0/tool_calls/0/args")).put("dir", "left");

        assertThat(ResultDiff.differences(result(RESULT), Json.decode(replay.toString(), RolloutResult.class)))
                .containsExactly("/trajectories/0/steps/0/tool_calls/0/args/dir: \"right\" != \"left\"",
                        "/trajectories/0/steps/1/reward: 1.0 != 0.5");
    }

    @Test
    void aShorterTrajectoryAndADifferentStatusAreReported() {
        ObjectNode replay = (ObjectNode) Json.mapper().valueToTree(result(RESULT));
        replay.put("status", "failed");
        ((com.fasterxml.jackson.databind.node.ArrayNode) replay.at("/trajectories/0/steps")).remove(1);

        assertThat(ResultDiff.differences(result(RESULT), Json.decode(replay.toString(), RolloutResult.class)))
                .contains("/status: \"OK\" != \"FAILED\"", "/trajectories/0/steps: 2 items != 1 items");
    }

    private static RolloutResult result(String json) {
        return Json.decode(json, RolloutResult.class);
    }
}
