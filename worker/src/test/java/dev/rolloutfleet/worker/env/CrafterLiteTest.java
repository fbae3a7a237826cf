package dev.rolloutfleet.worker.env;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.policy.Policies;
import dev.rolloutfleet.worker.rollout.AttemptContext;
import dev.rolloutfleet.worker.rollout.RolloutListener;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

class CrafterLiteTest {

    private final RolloutRunner runner = new RolloutRunner(Environments.builtIn(), Policies.builtIn(), Clock.systemUTC());

    static RolloutRequest request(String runId, long seed, int steps, String strategy) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", steps);
        ObjectNode policyConfig = Json.object();
        policyConfig.putObject("step_rewards").put("enabled", true).put("mode", "decision_stepwise").put("strategy", strategy);
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null, new RolloutRequest.EnvSpec("crafter-lite", seed, envConfig),
                new RolloutRequest.PolicySpec("scripted", policyConfig), null, null, null, null, null, null, null, null, null);
    }

    @Test
    void itHasCraftersActionsAchievementsInventoryAndATextView() throws Exception {
        CrafterLite env = new CrafterLite(3);
        ObjectNode obs = env.reset();
        assertThat(CrafterLite.ACTIONS).hasSize(17);
        assertThat(obs.get("achievements_status").size()).isEqualTo(22);
        assertThat(obs.get("achievements_counts").size()).isEqualTo(22);
        assertThat(obs.at("/inventory/health").asInt()).isEqualTo(9);
        assertThat(obs.get("text").asText()).contains("@").contains("Vitals: health 9");
        JsonNode schema = env.tools().get(0).at("/function/parameters/properties/actions");
        assertThat(schema.at("/items/enum")).hasSize(17);
        assertThat(schema.get("maxItems").asInt()).isEqualTo(5);
    }

    @Test
    void theSameSeedGivesTheSameWorldAndTrajectory() {
        RolloutResult first = runner.run(request("c", 5L, 30, "consistent"), new AttemptContext("a", null, 0), RolloutListener.NONE);
        RolloutResult second = runner.run(request("c", 5L, 30, "consistent"), new AttemptContext("a", null, 0), RolloutListener.NONE);
        assertThat(Json.encodeToString(first.trajectories().get(0).steps().stream().map(RolloutResult.Step::obs).toList()))
                .isEqualTo(Json.encodeToString(second.trajectories().get(0).steps().stream().map(RolloutResult.Step::obs).toList()));
        assertThat(new CrafterLite(5).reset().get("text").asText()).isNotEqualTo(new CrafterLite(6).reset().get("text").asText());
    }

    @Test
    void aRandomAgentUnlocksAchievementsAndEarnsPerAchievementStepRewards() {
        RolloutResult result = runner.run(request("explore", 11L, 300, "per_achievement"), new AttemptContext("a", null, 0),
                RolloutListener.NONE);
        assertThat(result.status()).isEqualTo(RolloutStatus.OK);
        JsonNode stepwise = result.metrics().details().get("stepwise");
        assertThat(stepwise.get("new_achievements_total").asInt()).isPositive();
        assertThat(stepwise.get("reward_sum").asDouble()).isPositive();
        assertThat(stepwise.get("unique_achievements").size()).isPositive();
        assertThat(result.trajectories().get(0).decisionSamples()).hasSize(result.metrics().numSteps());
    }

    @Test
    void randomAgentsReachAchievementsOfEveryKindAcrossSeeds() {
        // Collecting, placing, crafting, eating, sleeping and fighting are all reachable.
        java.util.Set<String> unlocked = new java.util.TreeSet<>();
        for (long seed = 0; seed < 40 && unlocked.size() < 22; seed++) {
            RolloutResult result = runner.run(request("sweep-" + seed, seed, 400, "consistent"),
                    new AttemptContext("a", null, 0), RolloutListener.NONE);
            result.metrics().details().get("stepwise").get("unique_achievements").forEach(a -> unlocked.add(a.asText()));
            if (!result.trajectories().get(0).steps().isEmpty()) {
                var last = result.trajectories().get(0).steps().get(result.trajectories().get(0).steps().size() - 1);
                last.obs().get("achievements_status").fields().forEachRemaining(e -> {
                    if (e.getValue().asBoolean()) {
                        unlocked.add(e.getKey());
                    }
                });
            }
        }
        assertThat(unlocked).contains("collect_wood", "collect_drink", "collect_sapling", "place_table", "eat_cow",
                "defeat_zombie", "defeat_skeleton");
    }

    @Test
    void anUnknownActionIsAnEnvironmentError() {
        CrafterLite env = new CrafterLite(1);
        env.reset();
        ObjectNode args = Json.object();
        args.putArray("actions").add("fly");
        assertThatThrownBy(() -> env.step(List.of(new ToolCall("interact", args))))
                .isInstanceOf(EnvironmentException.class).hasMessageContaining("unknown action \"fly\"");
    }
}
