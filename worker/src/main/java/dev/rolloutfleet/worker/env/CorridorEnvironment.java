package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.List;

/**
 * A tiny deterministic world for local runs and tests: the agent stands at 0 in a corridor and
 * must walk to the goal, whose distance (3 to 7) comes from the seed. Tool {@code move} with
 * {@code {"direction": "left"|"right"}}; reaching the goal gives reward 1 and ends the episode.
 */
public final class CorridorEnvironment implements Environment {

    public static final String NAME = "corridor";

    private final int goal;
    private int position;
    private int steps;

    CorridorEnvironment(long seed) {
        this.goal = 3 + (int) Long.remainderUnsigned(seed, 5);
    }

    @Override
    public ObjectNode reset() {
        position = 0;
        steps = 0;
        return observation();
    }

    @Override
    public EnvStep step(List<ToolCall> toolCalls) throws EnvironmentException {
        for (ToolCall call : toolCalls) {
            if (!"move".equals(call.tool())) {
                throw new EnvironmentException("corridor has one tool, \"move\"; got \"" + call.tool() + "\"");
            }
            String direction = call.args().path("direction").asText("");
            switch (direction) {
                case "right" -> position++;
                case "left" -> position = Math.max(0, position - 1);
                default -> throw new EnvironmentException(
                        "move.direction must be \"left\" or \"right\", got \"" + direction + "\"");
            }
        }
        steps++;
        boolean done = position >= goal;
        return new EnvStep(observation(), done ? 1.0 : 0.0, done, false, Json.object().put("steps", steps));
    }

    @Override
    public List<ObjectNode> tools() {
        ObjectNode direction = Json.object().put("type", "string");
        direction.putArray("enum").add("left").add("right");
        return List.of(ToolSchemas.function("move", "Step left or right along the corridor.", "direction", direction));
    }

    private ObjectNode observation() {
        return Json.object().put("position", position).put("goal", goal).put("steps", steps)
                .put("text", "You are at " + position + " in a corridor; the goal is at " + goal + ". Call move.");
    }

    /** Makes corridors. */
    public static final class Factory implements EnvironmentFactory {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Environment create(RolloutRequest.EnvSpec spec, long seed) {
            return new CorridorEnvironment(seed);
        }
    }
}
