package dev.rolloutfleet.worker;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicNames;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything a {@link Worker} needs. {@code maxRequestBytes} refuses (to the DLQ, with the reason)
 * any request value larger than it.
 */
public record WorkerConfig(
        KafkaConnection kafka,
        TopicNames topics,
        String groupId,
        String workerId,
        int maxRequestBytes,
        Duration pollTimeout) {

    public static final String DEFAULT_GROUP_ID = "rollout-workers";
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;

    public WorkerConfig {
        Objects.requireNonNull(kafka, "kafka");
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(workerId, "workerId");
        if (maxRequestBytes <= 0) {
            throw new IllegalArgumentException("max request bytes must be positive, got " + maxRequestBytes);
        }
    }

    public static WorkerConfig defaults(KafkaConnection kafka, TopicNames topics, String workerId) {
        return new WorkerConfig(kafka, topics, DEFAULT_GROUP_ID, workerId, DEFAULT_MAX_REQUEST_BYTES, Duration.ofMillis(200));
    }

    public WorkerConfig withGroupId(String newGroupId) {
        return new WorkerConfig(kafka, topics, newGroupId, workerId, maxRequestBytes, pollTimeout);
    }
}
