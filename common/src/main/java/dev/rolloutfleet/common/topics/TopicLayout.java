package dev.rolloutfleet.common.topics;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

/**
 * How many partitions and replicas each topic gets, and its configs. Results and token-capture
 * share one partition count (their co-partitioning is what lets a collector own both halves of a
 * run); the capture topic is compacted because its state is a pure function of the latest value
 * per key.
 */
public record TopicLayout(
        TopicNames names,
        int requestPartitions,
        int resultPartitions,
        int tracePartitions,
        short replicationFactor,
        int maxMessageBytes) {

    public static final int DEFAULT_PARTITIONS = 12;
    /** Big enough for long trajectories and 32k-token captures; producers are sized to match. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

    public TopicLayout {
        requirePositive("request partitions", requestPartitions);
        requirePositive("result partitions", resultPartitions);
        requirePositive("trace partitions", tracePartitions);
        requirePositive("replication factor", replicationFactor);
        requirePositive("max message bytes", maxMessageBytes);
    }

    public static TopicLayout of(TopicNames names, int partitions, short replicationFactor) {
        return new TopicLayout(names, partitions, partitions, partitions, replicationFactor, DEFAULT_MAX_MESSAGE_BYTES);
    }

    /** The topics to create, in creation order. */
    public Map<String, NewTopic> newTopics() {
        Map<String, NewTopic> topics = new LinkedHashMap<>();
        String maxBytes = Integer.toString(maxMessageBytes);
        topics.put(names.requests(), topic(names.requests(), requestPartitions, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, maxBytes)));
        topics.put(names.results(), topic(names.results(), resultPartitions, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, maxBytes)));
        topics.put(names.tokenCapture(), topic(names.tokenCapture(), resultPartitions, Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
                TopicConfig.MAX_MESSAGE_BYTES_CONFIG, maxBytes,
                // Tombstones of retired evidence must outlive a collector restore that is in progress.
                TopicConfig.DELETE_RETENTION_MS_CONFIG, Long.toString(24L * 3600 * 1000))));
        topics.put(names.traces(), topic(names.traces(), tracePartitions, Map.of()));
        topics.put(names.control(), topic(names.control(), 1, Map.of()));
        topics.put(names.durable(), topic(names.durable(), resultPartitions, Map.of()));
        topics.put(names.requestsDlq(), topic(names.requestsDlq(), 1, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, maxBytes)));
        return topics;
    }

    private NewTopic topic(String name, int partitions, Map<String, String> configs) {
        return new NewTopic(name, partitions, replicationFactor).configs(configs);
    }

    private static void requirePositive(String what, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + value);
        }
    }
}
