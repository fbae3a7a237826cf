package dev.rolloutfleet.worker.rollout;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RequestValidator;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutResult.RolloutError;
import dev.rolloutfleet.common.wire.RolloutResult.RolloutMetrics;
import dev.rolloutfleet.common.wire.RolloutResult.Step;
import dev.rolloutfleet.common.wire.RolloutResult.Trajectory;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.env.EnvStep;
import dev.rolloutfleet.worker.env.Environment;
import dev.rolloutfleet.worker.env.EnvironmentException;
import dev.rolloutfleet.worker.env.EnvironmentFactory;
import dev.rolloutfleet.worker.env.Environments;
import dev.rolloutfleet.worker.env.ToolCall;
import dev.rolloutfleet.worker.policy.Decision;
import dev.rolloutfleet.worker.policy.Policies;
import dev.rolloutfleet.worker.policy.Policy;
import dev.rolloutfleet.worker.policy.PolicyContext;
import dev.rolloutfleet.worker.policy.PolicyException;
import dev.rolloutfleet.worker.policy.PolicyFactory;
import dev.rolloutfleet.worker.reward.StepRewardConfig;
import dev.rolloutfleet.worker.reward.StepRewards;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one attempt of a validated request: the loop of {@code agent} (policy decides tool calls)
 * and {@code env} (environment applies them) ops, with the seed task app's semantics. Ops default
 * to {@code agent, env} repeated {@code max_steps_per_episode} times and are capped at twice that;
 * a finished episode is reset or ends the rollout per {@code on_done}; {@code safety.max_ops}
 * stops the loop. Every outcome is a result, never an exception: failures carry a code from
 * {@link FailureCode} and the trajectory so far. Thread-safe; each call runs on the caller's thread.
 */
public final class RolloutRunner {

    private static final Logger log = LoggerFactory.getLogger(RolloutRunner.class);

    private final Environments environments;
    private final Policies policies;
    private final Clock clock;

    public RolloutRunner(Environments environments, Policies policies, Clock clock) {
        this.environments = environments;
        this.policies = policies;
        this.clock = clock;
    }

    public RolloutResult run(RolloutRequest request, AttemptContext context, RolloutListener listener) {
        return run(request, context, listener, RolloutControl.NONE);
    }

    /**
     * Runs the attempt under {@code control}: its stop signal is honoured before every op and when a
     * blocking call is interrupted; the deadline ({@code safety.max_time_s}) is armed on it.
     */
    public RolloutResult run(RolloutRequest request, AttemptContext context, RolloutListener listener,
            RolloutControl control) {
        Run run = new Run(request, context, new SafeListener(listener, request.runId()), control);
        return run.execute();
    }

    /** The ops to run: the request's, or the default, capped at twice the episode length. */
    static List<String> opsOf(RolloutRequest request) {
        int maxSteps = RequestValidator.maxStepsPerEpisode(request.env());
        List<String> ops = request.ops();
        if (ops == null) {
            List<String> defaults = new ArrayList<>(2 * maxSteps);
            for (int i = 0; i < maxSteps; i++) {
                defaults.add("agent");
                defaults.add("env");
            }
            return defaults;
        }
        return ops.size() > 2 * maxSteps ? ops.subList(0, 2 * maxSteps) : ops;
    }

    /** The state of one attempt while it runs. */
    private final class Run {
        private final RolloutRequest request;
        private final AttemptContext context;
        private final SafeListener listener;
        private final RolloutControl control;
        private final StepRewardConfig rewardConfig;
        private final StepRewards stepRewards;
        private final List<Step> steps = new ArrayList<>();
        private final List<Double> episodeReturns = new ArrayList<>();
        private final long startedAtMs;
        private ObjectNode observation;
        private double episodeReturn;
        private boolean episodeHasSteps;
        private int opsExecuted;
        /** When the last agent decision came back, for the previous step's decision_ms; 0 before any. */
        private long lastDecisionAtNanos;
        private long lastEnvStepEndNanos;

        Run(RolloutRequest request, AttemptContext context, SafeListener listener, RolloutControl control) {
            this.request = request;
            this.context = context;
            this.listener = listener;
            this.control = control;
            this.rewardConfig = StepRewardConfig.of(request);
            this.stepRewards = rewardConfig.active() ? new StepRewards(rewardConfig) : null;
            this.startedAtMs = clock.millis();
        }

        RolloutResult execute() {
            long seed = RolloutSeeds.seedOf(request);
            ObjectNode started = Json.object().put("seed", seed)
                    .put("env_name", request.env().envName()).put("policy_name", request.policy().policyName());
            if (context.worker() != null) {
                started.put("worker_id", context.worker().id()).put("partition", context.worker().partition())
                        .put("offset", context.worker().offset());
            }
            listener.rolloutStarted(started);
            StopSignal early = control.stopSignal();
            if (early != null) {
                return stopped(early);
            }
            control.armDeadline(Duration.ofMillis((long) (maxTimeS() * 1000)));
            EnvironmentFactory envFactory = environments.find(request.env()).orElse(null);
            if (envFactory == null) {
                return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.UNKNOWN_ENV,
                        "no environment named \"" + request.env().envName() + "\"; this worker has " + environments.names()));
            }
            PolicyFactory policyFactory = policies.find(request.policy()).orElse(null);
            if (policyFactory == null) {
                return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.UNKNOWN_POLICY,
                        "no policy named \"" + request.policy().policyName() + "\"; this worker has " + policies.names()));
            }
            try (Environment env = envFactory.create(request.env(), seed)) {
                try {
                    observation = env.reset();
                } catch (EnvironmentException e) {
                    return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.ENV_STEP_FAILED, "reset failed: " + e.getMessage()));
                }
                if (stepRewards != null) {
                    stepRewards.start(observation);
                }
                // After the reset: a remote environment names its tools when it is created.
                Policy policy = policyFactory.create(request.policy(), new PolicyContext(seed, env.tools(), context.capture()));
                return loop(env, policy);
            } catch (EnvironmentException e) {
                return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.ENV_STEP_FAILED, e.getMessage()));
            } catch (PolicyException e) {
                return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.POLICY_STEP_FAILED, e.getMessage()));
            } catch (InterruptedException e) {
                StopSignal signal = control.stopSignal();
                return stopped(signal != null ? signal
                        : new StopSignal(StopSignal.Kind.CANCEL, "the rollout was interrupted"));
            } catch (RuntimeException e) {
                log.warn("rollout {} attempt {} failed unexpectedly", request.runId(), context.attempt(), e);
                return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.INTERNAL_ERROR,
                        e.getClass().getSimpleName() + ": " + e.getMessage()));
            }
        }

        private RolloutResult loop(Environment env, Policy policy) throws InterruptedException {
            int maxOps = request.safety() != null && request.safety().maxOps() != null
                    ? request.safety().maxOps() : RolloutRequest.SafetySpec.DEFAULT_MAX_OPS;
            double maxTimeS = maxTimeS();
            long deadlineMs = startedAtMs + (long) (maxTimeS * 1000);
            Decision pending = null;
            int decisionIndex = 0;
            List<String> ops = opsOf(request);
            for (int opIndex = 0; opIndex < ops.size(); opIndex++) {
                if (opsExecuted >= maxOps) {
                    break;
                }
                StopSignal signal = control.stopSignal();
                if (signal != null) {
                    return stopped(signal);
                }
                if (clock.millis() > deadlineMs) {
                    return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.DEADLINE_EXCEEDED,
                            "safety.max_time_s of " + maxTimeS + " s passed after " + opsExecuted + " ops"));
                }
                if ("agent".equals(ops.get(opIndex))) {
                    backfillDecisionTiming(System.nanoTime());
                    listener.decisionStarted(Json.object().put("decision_index", decisionIndex).put("op_index", opIndex));
                    try {
                        pending = policy.decide(observation, decisionIndex);
                        lastDecisionAtNanos = System.nanoTime();
                    } catch (PolicyException e) {
                        return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.POLICY_STEP_FAILED, e.getMessage()));
                    }
                    if (pending.meta() != null && pending.meta().has("model")) {
                        listener.lmCall(pending.meta().deepCopy().put("decision_index", decisionIndex));
                    }
                    if (pending.toolCalls().isEmpty()) {
                        return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.NO_TOOL_CALLS,
                                "the policy returned no tool calls at decision " + decisionIndex));
                    }
                    decisionIndex++;
                    opsExecuted++;
                } else {
                    if (pending == null) {
                        return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.NO_TOOL_CALLS,
                                "op " + opIndex + " is env but no agent decision precedes it"));
                    }
                    EnvStep outcome;
                    long stepStart = System.nanoTime();
                    try {
                        outcome = env.step(pending.toolCalls());
                    } catch (EnvironmentException e) {
                        return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.ENV_STEP_FAILED, e.getMessage()));
                    }
                    lastEnvStepEndNanos = System.nanoTime();
                    double envStepMs = (lastEnvStepEndNanos - stepStart) / 1e6;
                    record(pending, outcome, envStepMs, opIndex, decisionIndex);
                    pending = null;
                    opsExecuted++;
                    if (outcome.done()) {
                        endEpisode();
                        if (RolloutRequest.ON_DONE_TERMINATE.equals(request.onDone())) {
                            break;
                        }
                        try {
                            observation = env.reset();
                        } catch (EnvironmentException e) {
                            return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.ENV_STEP_FAILED,
                                    "reset after episode end failed: " + e.getMessage()));
                        }
                        if (stepRewards != null) {
                            stepRewards.reset(observation);
                        }
                    }
                }
            }
            if (steps.isEmpty()) {
                return finish(RolloutStatus.FAILED, new RolloutError(FailureCode.NO_STEPS_EXECUTED,
                        "no environment step ran (" + ops.size() + " ops, max_ops " + maxOps + ")"));
            }
            return finish(RolloutStatus.OK, null);
        }

        /**
         * The seed's back-filling: a step's {@code decision_ms} (from its decision coming back to the
         * next decision starting) and {@code overhead_ms} (that minus its env step) are only known
         * when the next decision starts, or the rollout ends.
         */
        private void backfillDecisionTiming(long nowNanos) {
            if (steps.isEmpty() || lastDecisionAtNanos == 0) {
                return;
            }
            ObjectNode timing = (ObjectNode) steps.get(steps.size() - 1).info().path("meta").path("timing");
            if (timing.isMissingNode() || timing.has("decision_ms")) {
                return;
            }
            double decisionMs = Math.max(0, (nowNanos - lastDecisionAtNanos) / 1e6);
            timing.put("decision_ms", decisionMs);
            timing.put("overhead_ms", Math.max(0, decisionMs - timing.path("env_step_ms").asDouble(0)));
        }

        private ObjectNode details() {
            ObjectNode details = Json.object();
            if (stepRewards != null) {
                details.set("stepwise", stepRewards.summary());
            }
            return details;
        }

        private double maxTimeS() {
            return request.safety() != null && request.safety().maxTimeS() != null
                    ? request.safety().maxTimeS() : RolloutRequest.SafetySpec.DEFAULT_MAX_TIME_S;
        }

        /** Ends the attempt for an outside reason, keeping the trajectory so far. */
        private RolloutResult stopped(StopSignal signal) {
            // The interrupt has been handled; clear it so listeners can still publish.
            Thread.interrupted();
            return switch (signal.kind()) {
                case ABORT -> finish(RolloutStatus.ABORTED, new RolloutError(FailureCode.ABORTED, signal.message()));
                case DEADLINE -> finish(RolloutStatus.FAILED, new RolloutError(FailureCode.DEADLINE_EXCEEDED, signal.message()));
                case CANCEL -> finish(RolloutStatus.FAILED, new RolloutError(FailureCode.CANCELLED, signal.message()));
            };
        }

        private void record(Decision decision, EnvStep outcome, double envStepMs, int opIndex, int decisionIndex) {
            ArrayNode toolCalls = Json.mapper().createArrayNode();
            decision.toolCalls().stream().map(ToolCall::toJson).forEach(toolCalls::add);
            ObjectNode info = outcome.info() == null ? Json.object() : outcome.info().deepCopy();
            ObjectNode meta = decision.meta() == null ? Json.object() : decision.meta().deepCopy();
            ObjectNode timing = meta.putObject("timing");
            JsonNode inferenceMs = meta.get("inference_ms");
            timing.put("inference_ms", inferenceMs == null ? 0.0 : inferenceMs.asDouble());
            timing.put("env_step_ms", envStepMs);
            info.set("meta", meta);
            if (stepRewards != null) {
                StepRewards.Outcome earned = stepRewards.step(decisionIndex, toolCalls.deepCopy(), outcome.observation());
                info.set("stepwise", earned.stepwise());
                meta.set("decision_rewards", earned.decisionRewards());
                listener.decisionReward(earned.decisionRewards().deepCopy().put("reward", earned.reward()));
            }
            List<JsonNode> calls = new ArrayList<>();
            toolCalls.forEach(calls::add);
            steps.add(new Step(observation, calls, outcome.reward(), outcome.done(), outcome.truncated(), info));
            episodeReturn += outcome.reward();
            episodeHasSteps = true;
            observation = outcome.observation();
            ObjectNode event = Json.object().put("op_index", opIndex).put("step", steps.size() - 1)
                    .put("reward", outcome.reward()).put("done", outcome.done()).put("truncated", outcome.truncated())
                    .put("env_step_ms", envStepMs);
            event.set("tool_calls", toolCalls);
            event.set("timing", timing.deepCopy());
            event.set("observation", summarize(outcome.observation()));
            listener.envStep(event);
        }

        /** A bounded summary of an observation for trace events: scalars kept, long text cut. */
        private static ObjectNode summarize(ObjectNode observation) {
            ObjectNode summary = Json.object();
            if (observation == null) {
                return summary;
            }
            observation.fields().forEachRemaining(e -> {
                JsonNode v = e.getValue();
                if (v.isTextual()) {
                    String text = v.asText();
                    summary.put(e.getKey(), text.length() > 500 ? text.substring(0, 500) + "..." : text);
                } else if (v.isValueNode()) {
                    summary.set(e.getKey(), v);
                } else if (v.size() <= 32) {
                    summary.set(e.getKey(), v.deepCopy());
                }
            });
            return summary;
        }

        private void endEpisode() {
            episodeReturns.add(episodeReturn);
            episodeReturn = 0;
            episodeHasSteps = false;
        }

        private RolloutResult finish(RolloutStatus status, RolloutError error) {
            backfillDecisionTiming(lastEnvStepEndNanos > 0 ? lastEnvStepEndNanos : System.nanoTime());
            if (episodeHasSteps) {
                endEpisode();
            }
            long finishedAtMs = clock.millis();
            double mean = episodeReturns.stream().mapToDouble(Double::doubleValue).average().orElse(0.0);
            ObjectNode finalObs = Json.object();
            if (observation != null) {
                finalObs.set("observation", observation);
            }
            boolean recordTrajectories = request.record() == null || request.record().recordsTrajectories();
            List<Trajectory> trajectories = recordTrajectories
                    ? List.of(new Trajectory(request.env().envName(), request.policy().policyName(), List.copyOf(steps),
                            finalObs, steps.size(), stepRewards == null ? null : List.copyOf(stepRewards.decisionSamples())))
                    : List.of();
            ObjectNode timing = Json.object()
                    .put("enqueued_at_ms", context.enqueuedAtMs())
                    .put("started_at_ms", startedAtMs)
                    .put("finished_at_ms", finishedAtMs)
                    .put("queue_delay_ms", Math.max(0, startedAtMs - context.enqueuedAtMs()))
                    .put("duration_ms", finishedAtMs - startedAtMs);
            RolloutResult result = new RolloutResult(SchemaVersion.CURRENT, request.runId(), context.attempt(),
                    request.groupId(), status, error, status == RolloutStatus.ABORTED, trajectories,
                    new RolloutMetrics(List.copyOf(episodeReturns), mean, steps.size(), episodeReturns.size(), details()),
                    opsExecuted, timing, context.worker(), request.policyVersion(), null, null);
            ObjectNode payload = Json.object().put("status", status.name().toLowerCase(java.util.Locale.ROOT))
                    .put("ops_executed", opsExecuted).put("num_steps", steps.size()).put("mean_return", mean);
            if (error != null) {
                payload.put("error_code", error.code()).put("error_message", error.message());
            }
            listener.rolloutFinished(payload);
            return result;
        }
    }

    /** Shields the rollout from a failing listener. */
    private record SafeListener(RolloutListener delegate, String runId) {
        void rolloutStarted(ObjectNode p) {
            guard(() -> delegate.rolloutStarted(p));
        }

        void decisionStarted(ObjectNode p) {
            guard(() -> delegate.decisionStarted(p));
        }

        void lmCall(ObjectNode p) {
            guard(() -> delegate.lmCall(p));
        }

        void decisionReward(ObjectNode p) {
            guard(() -> delegate.decisionReward(p));
        }

        void envStep(ObjectNode p) {
            guard(() -> delegate.envStep(p));
        }

        void rolloutFinished(ObjectNode p) {
            guard(() -> delegate.rolloutFinished(p));
        }

        private void guard(Runnable call) {
            try {
                call.run();
            } catch (RuntimeException e) {
                log.warn("a rollout listener failed for run {}; the rollout goes on", runId, e);
            }
        }
    }
}
