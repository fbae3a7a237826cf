package dev.rolloutfleet.worker.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Step rewards against expectations computed by hand from the seed's compute_stepwise_reward. */
class StepRewardsTest {

    static ObjectNode obs(Map<String, Boolean> achievements, Map<String, Integer> inventory, Map<String, Integer> counts) {
        ObjectNode o = Json.object();
        o.set("achievements_status", Json.tree(achievements));
        o.set("inventory", Json.tree(inventory));
        o.set("achievements_counts", Json.tree(counts));
        return o;
    }

    static StepRewardConfig config(String strategy, Map<String, Double> weights, Map<String, Integer> limits, double lambda) {
        return new StepRewardConfig(true, "decision_stepwise", strategy, weights, limits, lambda, 0);
    }

    static ArrayNode actions() {
        ArrayNode a = Json.mapper().createArrayNode();
        a.add(Json.object().put("tool", "interact"));
        return a;
    }

    static Stream<Arguments> oneDecision() {
        ObjectNode start = obs(Map.of("collect_wood", false, "place_table", false), Map.of("wood", 0, "table", 0),
                Map.of("collect_wood", 0));
        return Stream.of(
                Arguments.of("consistent: an unlock earns 1", config("consistent", Map.of(), Map.of(), 0), start,
                        obs(Map.of("collect_wood", true, "place_table", false), Map.of("wood", 1), Map.of("collect_wood", 1)),
                        1, 1.0),
                Arguments.of("consistent: lambda scales the reward", config("consistent", Map.of(), Map.of(), 0.5), start,
                        obs(Map.of("collect_wood", true, "place_table", false), Map.of("wood", 1), Map.of("collect_wood", 1)),
                        1, 0.5),
                Arguments.of("consistent: no unlock, no reward, resources ignored", config("consistent", Map.of(), Map.of(), 0),
                        start, obs(Map.of("collect_wood", false, "place_table", false), Map.of("wood", 5), Map.of()),
                        0, 0.0),
                // 2.0 (collect_wood weight) + 1.0 (place_table default) + wood 2×0.10 + table 1×0.30 + count 1×0.08
                Arguments.of("per_achievement: weights plus resources", config("per_achievement",
                        Map.of("collect_wood", 2.0), Map.of(), 0), start,
                        obs(Map.of("collect_wood", true, "place_table", true), Map.of("wood", 2, "table", 1),
                                Map.of("collect_wood", 1)), 1, 3.58),
                // stone 2×0.15 + gem 1×0.05 (default), times lambda 2
                Arguments.of("per_achievement: resources alone set the indicator", config("per_achievement", Map.of(),
                        Map.of(), 2.0), obs(Map.of(), Map.of("stone", 1), Map.of()),
                        obs(Map.of(), Map.of("stone", 3, "gem", 1), Map.of()), 1, 0.70));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oneDecision")
    void oneDecisionEarnsWhatTheSeedComputes(String name, StepRewardConfig config, ObjectNode before, ObjectNode after,
            int indicator, double reward) {
        StepRewards rewards = new StepRewards(config);
        rewards.start(before);
        StepRewards.Outcome outcome = rewards.step(1, actions(), after);
        assertThat(outcome.stepwise().get("indicator").asInt()).isEqualTo(indicator);
        assertThat(outcome.reward()).isCloseTo(reward, within(1e-9));
        assertThat(outcome.stepwise().get("reward").asDouble()).isCloseTo(reward, within(1e-9));
        assertThat(outcome.decisionSample().get("r_i").asDouble()).isCloseTo(reward, within(1e-9));
        assertThat(outcome.decisionSample().get("actions").toString()).isEqualTo("[{\"tool\":\"interact\"}]");
    }

    @Test
    void kLimitsCapCreditsPerEpisodeAndZeroMeansUnlimited() {
        ObjectNode off = obs(Map.of("eat_cow", false), Map.of(), Map.of());
        ObjectNode on = obs(Map.of("eat_cow", true), Map.of(), Map.of());
        StepRewards limited = new StepRewards(config("per_achievement", Map.of("eat_cow", 3.0), Map.of(), 0));
        limited.start(off);
        assertThat(limited.step(1, actions(), on).reward()).isEqualTo(3.0);
        limited.step(2, actions(), off);
        StepRewards.Outcome again = limited.step(3, actions(), on);
        assertThat(again.reward()).as("default k_limit 1: the second unlock earns nothing").isZero();
        assertThat(again.stepwise().get("indicator").asInt()).as("but the indicator still fires").isEqualTo(1);

        StepRewards unlimited = new StepRewards(config("per_achievement", Map.of("eat_cow", 3.0), Map.of("eat_cow", 0), 0));
        unlimited.start(off);
        unlimited.step(1, actions(), on);
        unlimited.step(2, actions(), off);
        assertThat(unlimited.step(3, actions(), on).reward()).isEqualTo(3.0);
    }

    @Test
    void aResetRestartsEpisodeCountsSoLimitsApplyPerEpisode() {
        ObjectNode off = obs(Map.of("eat_cow", false), Map.of(), Map.of());
        ObjectNode on = obs(Map.of("eat_cow", true), Map.of(), Map.of());
        StepRewards rewards = new StepRewards(config("per_achievement", Map.of(), Map.of(), 0));
        rewards.start(off);
        assertThat(rewards.step(1, actions(), on).reward()).isEqualTo(1.0);
        rewards.reset(off);
        StepRewards.Outcome next = rewards.step(2, actions(), on);
        assertThat(next.reward()).isEqualTo(1.0);
        assertThat(next.decisionRewards().get("unique_delta").asInt()).as("unique again in the new episode").isEqualTo(1);
    }

    @Test
    void decisionRewardsCountAllAndUniqueUnlocks() {
        ObjectNode off = obs(Map.of("a", false, "b", false), Map.of(), Map.of());
        StepRewards rewards = new StepRewards(config("consistent", Map.of(), Map.of(), 0));
        rewards.start(off);
        StepRewards.Outcome first = rewards.step(1, actions(), obs(Map.of("a", true, "b", false), Map.of(), Map.of()));
        assertThat(first.decisionRewards().toString())
                .isEqualTo("{\"turn\":1,\"ach_delta\":1,\"unique_delta\":1,\"all\":[\"a\"],\"unique\":[\"a\"]}");
        rewards.step(2, actions(), off);
        StepRewards.Outcome third = rewards.step(3, actions(), obs(Map.of("a", true, "b", true), Map.of(), Map.of()));
        assertThat(third.decisionRewards().toString())
                .isEqualTo("{\"turn\":3,\"ach_delta\":2,\"unique_delta\":1,\"all\":[\"a\",\"b\"],\"unique\":[\"b\"]}");
        ObjectNode summary = rewards.summary();
        assertThat(summary.get("indicator_sum").asDouble()).isEqualTo(2.0);
        assertThat(summary.get("reward_sum").asDouble()).isEqualTo(2.0);
        assertThat(summary.get("new_achievements_total").asInt()).isEqualTo(3);
        assertThat(summary.get("unique_achievements").toString()).isEqualTo("[\"a\",\"b\"]");
        assertThat(summary.get("final_achievements").toString()).isEqualTo("[\"a\",\"b\"]");
    }

    @Test
    void strategyAliasesFollowTheSeed() {
        for (String alias : new String[] {"per-achievement", "perachievement", "achievement_weighted", "complex", "PER_ACHIEVEMENT"}) {
            assertThat(StepRewardConfig.normalizeStrategy(Json.mapper().getNodeFactory().textNode(alias))).isEqualTo("per_achievement");
        }
        for (String alias : new String[] {"simple", "consistent_stepwise", "decision_consistent", "", "anything"}) {
            assertThat(StepRewardConfig.normalizeStrategy(Json.mapper().getNodeFactory().textNode(alias))).isEqualTo("consistent");
        }
    }

    @Test
    void policyConfigComesFirstAndEnvConfigIsTheFallback() {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("step_rewards").put("enabled", true).put("mode", "decision_stepwise").put("strategy", "complex");
        ObjectNode policyConfig = Json.object();
        RolloutRequest envOnly = new RolloutRequest(SchemaVersion.CURRENT, "r", null, new RolloutRequest.EnvSpec("e", 1L, envConfig),
                new RolloutRequest.PolicySpec("p", policyConfig), null, null, null, null, null, null, null, null, null);
        assertThat(StepRewardConfig.of(envOnly).active()).isTrue();
        assertThat(StepRewardConfig.of(envOnly).strategy()).isEqualTo("per_achievement");

        policyConfig.putObject("step_rewards").put("enabled", true).put("mode", "off");
        assertThat(StepRewardConfig.of(envOnly).active()).as("the policy's settings win, and mode off is inactive").isFalse();
    }
}
