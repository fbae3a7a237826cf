package dev.rolloutfleet.worker.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.worker.capture.TokenCapture;
import dev.rolloutfleet.worker.env.ToolCall;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A built-in policy with no model behind it: answers a {@code math} problem, walks toward
 * {@code goal} in the corridor, and in any other environment calls its first tool with valid
 * random arguments; with probability {@code epsilon} (config, default 0) it answers wrong or moves
 * at random instead, drawn
 * from the rollout's seed. {@code latency_ms} (config, default 0) makes each decision wait that
 * long, standing in for inference time; {@code latency_jitter_ms} adds a seeded random 0..jitter.
 * With token capture on it records byte-level token ids for each decision (see {@link #record}).
 */
public final class ScriptedPolicy implements Policy {

    public static final String NAME = "scripted";

    private final double epsilon;
    private final long latencyMs;
    private final long jitterMs;
    private final SplittableRandom random;
    private final List<ObjectNode> tools;
    private final TokenCapture capture;
    /** The conversation so far as byte-level token ids: each call's prompt extends the last prompt and generation. */
    private final List<Integer> transcript = new ArrayList<>();

    ScriptedPolicy(double epsilon, long latencyMs, long jitterMs, long seed, List<ObjectNode> tools, TokenCapture capture) {
        this.tools = tools;
        this.capture = capture;
        this.epsilon = epsilon;
        this.latencyMs = latencyMs;
        this.jitterMs = jitterMs;
        this.random = new SplittableRandom(seed);
    }

    @Override
    public Decision decide(ObjectNode observation, int decisionIndex) throws InterruptedException {
        Decision decision = choose(observation);
        if (capture.participating()) {
            record(observation, decisionIndex, decision);
        }
        return decision;
    }

    /**
     * With token capture on, each decision is recorded as if a byte-level model had made it: the
     * prompt is the transcript plus the observation, the generation is the tool calls' JSON, every
     * log-prob 0. The capture path (entries, freeze, rebuild, retire) then runs without a model.
     */
    private void record(ObjectNode observation, int decisionIndex, Decision decision) {
        appendBytes(transcript, Json.encodeToString(observation));
        // A view, not a copy: the capture encodes the entry before this method returns.
        List<Integer> prompt = Collections.unmodifiableList(transcript.subList(0, transcript.size()));
        List<Integer> generation = new ArrayList<>();
        appendBytes(generation, Json.encodeToString(decision.toolCalls()));
        capture.record("scripted-" + decisionIndex, NAME, prompt, generation, Collections.nCopies(generation.size(), 0.0),
                Json.object().put("tool_calls", Json.encodeToString(decision.toolCalls())));
        transcript.addAll(generation);
    }

    private static void appendBytes(List<Integer> ids, String text) {
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            ids.add(b & 0xff);
        }
    }

    private Decision choose(ObjectNode observation) throws InterruptedException {
        long wait = latencyMs + (jitterMs > 0 ? random.nextLong(jitterMs + 1) : 0);
        if (wait > 0) {
            Thread.sleep(wait);
        }
        if (observation.has("op") && observation.has("a") && observation.has("b")) {
            return new Decision(List.of(new ToolCall("answer", Json.object().put("value", solve(observation)))),
                    Json.object().put("policy", NAME).put("inference_ms", wait));
        }
        boolean corridor = tools.isEmpty()
                || tools.stream().anyMatch(t -> "move".equals(t.path("function").path("name").asText()));
        if (!corridor) {
            // Any other environment: valid random arguments for its first tool.
            JsonNode function = tools.get(0).path("function");
            JsonNode args = SchemaSampler.sample(function.path("parameters"), random);
            return new Decision(List.of(new ToolCall(function.path("name").asText(),
                    args.isObject() ? (ObjectNode) args : Json.object())), Json.object().put("policy", NAME).put("inference_ms", wait));
        }
        String direction;
        if (epsilon > 0 && random.nextDouble() < epsilon) {
            direction = random.nextBoolean() ? "right" : "left";
        } else {
            JsonNode goal = observation.get("goal");
            JsonNode position = observation.get("position");
            direction = goal != null && position != null && position.asInt() > goal.asInt() ? "left" : "right";
        }
        ObjectNode args = Json.object().put("direction", direction);
        return new Decision(List.of(new ToolCall("move", args)),
                Json.object().put("policy", NAME).put("inference_ms", wait));
    }

    /** Answers a math problem, wrongly (off by one) with probability {@code epsilon}. */
    private long solve(ObjectNode problem) {
        long a = problem.get("a").asLong();
        long b = problem.get("b").asLong();
        long answer = switch (problem.get("op").asText()) {
            case "+" -> a + b;
            case "-" -> a - b;
            default -> a * b;
        };
        return epsilon > 0 && random.nextDouble() < epsilon ? answer + 1 : answer;
    }

    /** Makes scripted policies from {@code policy.config}. */
    public static final class Factory implements PolicyFactory {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Policy create(RolloutRequest.PolicySpec spec, PolicyContext context) throws PolicyException {
            long seed = context.seed();
            JsonNode config = spec.config() == null ? Json.object() : spec.config();
            double epsilon = config.path("epsilon").asDouble(0);
            long latency = config.path("latency_ms").asLong(0);
            long jitter = config.path("latency_jitter_ms").asLong(0);
            if (epsilon < 0 || epsilon > 1) {
                throw new PolicyException("policy.config.epsilon must be between 0 and 1, got " + epsilon);
            }
            if (latency < 0 || jitter < 0) {
                throw new PolicyException("policy.config.latency_ms and latency_jitter_ms must not be negative");
            }
            return new ScriptedPolicy(epsilon, latency, jitter, seed, context.tools(), context.capture());
        }
    }
}
