package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One instance of an environment, owned by one rollout. Called from that rollout's thread only;
 * implementations need not be thread-safe. A step that fails throws {@link EnvironmentException};
 * the rollout then ends with {@code env_step_failed}.
 */
public interface Environment extends AutoCloseable {

    /** Starts a new episode and returns its first observation. */
    ObjectNode reset() throws EnvironmentException;

    /** Applies the tool calls of one decision. */
    EnvStep step(List<ToolCall> toolCalls) throws EnvironmentException;

    /** The tool schema policies may call, in the OpenAI {@code tools} format. */
    default List<ObjectNode> tools() {
        return List.of();
    }

    /** Releases what the instance holds (a remote instance, a file); never throws. */
    @Override
    default void close() {}
}
