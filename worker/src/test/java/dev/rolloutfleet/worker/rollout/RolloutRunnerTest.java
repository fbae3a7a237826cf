package dev.rolloutfleet.worker.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.env.Environments;
import dev.rolloutfleet.worker.policy.Policies;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

class RolloutRunnerTest {

    private final RolloutRunner runner = new RolloutRunner(Environments.builtIn(), Policies.builtIn(), Clock.systemUTC());

    static RolloutRequest corridor(String runId, Long seed, int maxSteps, List<String> ops, String onDone, double epsilon) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", maxSteps);
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null, new RolloutRequest.EnvSpec("corridor", seed, envConfig),
                new RolloutRequest.PolicySpec("scripted", Json.object().put("epsilon", epsilon).put("latency_ms", 2)),
                ops, null, onDone, null, null, null, null, null, null);
    }

    private RolloutResult run(RolloutRequest request) {
        return runner.run(request, new AttemptContext("a1", null, 0), RolloutListener.NONE);
    }

    @Test
    void everyStepCarriesTimingWithTheDecisionTimeBackFilled() {
        RolloutResult result = run(corridor("timed", 3L, 10, null, "terminate", 0));
        List<RolloutResult.Step> steps = result.trajectories().get(0).steps();
        assertThat(steps).isNotEmpty().allSatisfy(step -> {
            JsonNode timing = step.info().at("/meta/timing");
            assertThat(timing.get("inference_ms").asDouble()).isGreaterThanOrEqualTo(2);
            assertThat(timing.has("env_step_ms")).isTrue();
            assertThat(timing.get("decision_ms").asDouble()).isGreaterThanOrEqualTo(timing.get("env_step_ms").asDouble());
            assertThat(timing.get("overhead_ms").asDouble()).isGreaterThanOrEqualTo(0);
        });
    }

    @Test
    void theSameSeedGivesTheSameTrajectory() {
        RolloutResult first = run(corridor("same", 11L, 12, null, "reset", 0.5));
        RolloutResult second = run(corridor("same", 11L, 12, null, "reset", 0.5));
        assertThat(first.trajectories().get(0).steps()).extracting(RolloutResult.Step::toolCalls)
                .isEqualTo(second.trajectories().get(0).steps().stream().map(RolloutResult.Step::toolCalls).toList());
        assertThat(first.metrics()).isEqualTo(second.metrics());
    }

    @Test
    void withoutASeedTheRunIdSeedsTheRolloutDeterministically() {
        assertThat(RolloutSeeds.fromRunId("run-1")).isEqualTo(RolloutSeeds.fromRunId("run-1"))
                .isNotEqualTo(RolloutSeeds.fromRunId("run-2")).isBetween(0L, 0xffffffffL);
        RolloutResult first = run(corridor("seeded-by-id", null, 12, null, "reset", 0.5));
        RolloutResult second = run(corridor("seeded-by-id", null, 12, null, "reset", 0.5));
        assertThat(first.metrics()).isEqualTo(second.metrics());
    }

    @Test
    void resetStartsANewEpisodeAndTerminateEndsTheRollout() {
        // Seed 0: the goal is 3 steps away; 9 steps of walking right finish three episodes with reset.
        RolloutResult reset = run(corridor("reset", 0L, 9, null, "reset", 0));
        assertThat(reset.metrics().numEpisodes()).isEqualTo(3);
        assertThat(reset.metrics().episodeReturns()).containsExactly(1.0, 1.0, 1.0);
        RolloutResult terminate = run(corridor("terminate", 0L, 9, null, "terminate", 0));
        assertThat(terminate.metrics().numEpisodes()).isEqualTo(1);
        assertThat(terminate.metrics().numSteps()).isEqualTo(3);
    }

    @Test
    void opsAreTruncatedToTwiceTheEpisodeLength() {
        List<String> ops = java.util.Collections.nCopies(20, "agent").stream()
                .flatMap(a -> java.util.stream.Stream.of("agent", "env")).toList();
        RolloutResult result = run(corridor("truncated", 0L, 2, ops, "reset", 0));
        assertThat(result.opsExecuted()).isEqualTo(4);
        assertThat(result.metrics().numSteps()).isEqualTo(2);
    }

    /** Unlocks achievement "step_N" at step N, so every decision earns a step reward. */
    static final class Achiever implements dev.rolloutfleet.worker.env.EnvironmentFactory {
        @Override
        public String name() {
            return "achiever";
        }

        @Override
        public dev.rolloutfleet.worker.env.Environment create(RolloutRequest.EnvSpec spec, long seed) {
            int[] step = {0};
            return new dev.rolloutfleet.worker.env.Environment() {
                @Override
                public ObjectNode reset() {
                    step[0] = 0;
                    return observation();
                }

                @Override
                public dev.rolloutfleet.worker.env.EnvStep step(List<dev.rolloutfleet.worker.env.ToolCall> calls) {
                    step[0]++;
                    return new dev.rolloutfleet.worker.env.EnvStep(observation(), 0.0, false, false, Json.object());
                }

                private ObjectNode observation() {
                    ObjectNode o = Json.object();
                    ObjectNode status = o.putObject("achievements_status");
                    for (int i = 1; i <= 3; i++) {
                        status.put("step_" + i, step[0] >= i);
                    }
                    return o;
                }
            };
        }
    }

    @Test
    void stepRewardsLandInEachStepTheTraceAndTheMetrics() {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", 3);
        ObjectNode policyConfig = Json.object();
        policyConfig.putObject("step_rewards").put("enabled", true).put("mode", "decision_stepwise").put("indicator_lambda", 0.5);
        RolloutRequest request = new RolloutRequest(SchemaVersion.CURRENT, "achieve", null,
                new RolloutRequest.EnvSpec("achiever", 1L, envConfig), new RolloutRequest.PolicySpec("scripted", policyConfig),
                null, null, null, null, null, null, null, null, null);
        RolloutRunner withAchiever = new RolloutRunner(
                new Environments(List.of(new Achiever())), Policies.builtIn(), Clock.systemUTC());
        List<JsonNode> rewardEvents = new java.util.ArrayList<>();
        RolloutResult result = withAchiever.run(request, new AttemptContext("a1", null, 0), new RolloutListener() {
            @Override
            public void decisionReward(ObjectNode payload) {
                rewardEvents.add(payload);
            }
        });
        assertThat(result.trajectories().get(0).steps()).hasSize(3).allSatisfy(step -> {
            assertThat(step.info().at("/stepwise/reward").asDouble()).isEqualTo(0.5);
            assertThat(step.info().at("/meta/decision_rewards/ach_delta").asInt()).isEqualTo(1);
        });
        assertThat(result.trajectories().get(0).decisionSamples()).hasSize(3);
        assertThat(rewardEvents).extracting(e -> e.get("turn").asInt()).containsExactly(1, 2, 3);
        JsonNode stepwise = result.metrics().details().get("stepwise");
        assertThat(stepwise.get("reward_sum").asDouble()).isEqualTo(1.5);
        assertThat(stepwise.get("indicator_sum").asDouble()).isEqualTo(3.0);
        assertThat(stepwise.get("final_achievements").toString()).isEqualTo("[\"step_1\",\"step_2\",\"step_3\"]");
    }

    @Test
    void aMathProblemIsOneVerifiedTurnWithRewardOneOrZero() {
        for (double epsilon : new double[] {0.0, 1.0}) {
            RolloutRequest request = new RolloutRequest(SchemaVersion.CURRENT, "math-" + epsilon, null,
                    new RolloutRequest.EnvSpec("math", 42L, null),
                    new RolloutRequest.PolicySpec("scripted", Json.object().put("epsilon", epsilon)),
                    null, null, RolloutRequest.ON_DONE_TERMINATE, null, null, null, null, null, null);
            RolloutResult result = run(request);
            assertThat(result.status()).isEqualTo(RolloutStatus.OK);
            assertThat(result.metrics().numSteps()).isEqualTo(1);
            assertThat(result.metrics().episodeReturns()).containsExactly(epsilon == 0.0 ? 1.0 : 0.0);
            assertThat(result.trajectories().get(0).steps().get(0).obs().get("text").asText()).startsWith("What is ");
        }
    }

    @Test
    void eachFailureEndsTheRolloutWithItsCode() {
        assertThat(run(corridor("env-first", 0L, 5, List.of("env", "agent"), "reset", 0)).error().code())
                .isEqualTo("no_tool_calls");
        assertThat(run(corridor("agent-only", 0L, 5, List.of("agent", "agent"), "reset", 0)).error().code())
                .isEqualTo("no_steps_executed");
        RolloutRequest unknownEnv = new RolloutRequest(SchemaVersion.CURRENT, "u", null,
                new RolloutRequest.EnvSpec("nope", 1L, null), new RolloutRequest.PolicySpec("scripted", null),
                null, null, null, null, null, null, null, null, null);
        assertThat(run(unknownEnv).error().code()).isEqualTo("unknown_env");
        RolloutRequest unknownPolicy = new RolloutRequest(SchemaVersion.CURRENT, "u", null,
                new RolloutRequest.EnvSpec("corridor", 1L, null), new RolloutRequest.PolicySpec("nope", null),
                null, null, null, null, null, null, null, null, null);
        assertThat(run(unknownPolicy).error().code()).isEqualTo("unknown_policy");
        RolloutRequest badPolicy = new RolloutRequest(SchemaVersion.CURRENT, "u", null,
                new RolloutRequest.EnvSpec("corridor", 1L, null),
                new RolloutRequest.PolicySpec("scripted", Json.object().put("epsilon", 3.0)),
                null, null, null, null, null, null, null, null, null);
        assertThat(run(badPolicy).error().code()).isEqualTo("policy_step_failed");
        assertThat(run(corridor("ok", 0L, 5, null, "terminate", 0)).status()).isEqualTo(RolloutStatus.OK);
    }
}
