package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A single-turn verifiable task: one arithmetic problem generated from the seed
 * ({@code a op b} with {@code a, b} in 2..99 and {@code op} one of + − ×). Tool {@code answer} with
 * {@code {"value": integer}}; reward 1 for the right answer, 0 otherwise; the episode ends after
 * one answer. The observation carries the problem as text and as {@code a}, {@code op}, {@code b}.
 */
public final class MathEnvironment implements Environment {

    public static final String NAME = "math";

    private final int a;
    private final int b;
    private final String op;
    private final long expected;

    MathEnvironment(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        this.a = 2 + random.nextInt(98);
        this.b = 2 + random.nextInt(98);
        this.op = switch (random.nextInt(3)) {
            case 0 -> "+";
            case 1 -> "-";
            default -> "*";
        };
        this.expected = switch (op) {
            case "+" -> (long) a + b;
            case "-" -> (long) a - b;
            default -> (long) a * b;
        };
    }

    @Override
    public ObjectNode reset() {
        return Json.object().put("text", "What is " + a + " " + op + " " + b + "? Call answer with the integer value.")
                .put("a", a).put("op", op).put("b", b);
    }

    @Override
    public EnvStep step(List<ToolCall> toolCalls) throws EnvironmentException {
        ToolCall call = toolCalls.get(0);
        if (!"answer".equals(call.tool())) {
            throw new EnvironmentException("math has one tool, \"answer\"; got \"" + call.tool() + "\"");
        }
        JsonNode value = call.args().get("value");
        boolean correct = value != null && value.canConvertToLong() && value.isIntegralNumber() && value.asLong() == expected;
        ObjectNode info = Json.object().put("correct", correct).put("expected", expected);
        ObjectNode observation = reset().put("answered", value == null ? null : value.asText()).put("correct", correct);
        return new EnvStep(observation, correct ? 1.0 : 0.0, true, false, info);
    }

    @Override
    public List<ObjectNode> tools() {
        return List.of(ToolSchemas.function("answer", "Give the answer.", "value", Json.object().put("type", "integer")));
    }

    /** Makes math problems. */
    public static final class Factory implements EnvironmentFactory {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Environment create(RolloutRequest.EnvSpec spec, long seed) {
            return new MathEnvironment(seed);
        }
    }
}
