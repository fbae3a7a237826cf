package dev.rolloutfleet.worker;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicNames;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything a {@link Worker} needs, built with {@link #builder}. Limits:
 * {@code maxInflight} rollouts run at once across the worker and at most
 * {@code maxInflightPerPartition} of one partition; a request larger than
 * {@code maxRequestBytes} goes to the DLQ; a revoked partition's rollouts get
 * {@code revokeGrace} to finish before they are cancelled.
 */
public record WorkerConfig(
        KafkaConnection kafka,
        TopicNames topics,
        String groupId,
        String workerId,
        String groupProtocol,
        String groupInstanceId,
        int maxInflight,
        int maxInflightPerPartition,
        int maxRequestBytes,
        Duration revokeGrace,
        Duration commitInterval,
        int maxCommitMetadataChars,
        Duration pollTimeout) {

    public static final String DEFAULT_GROUP_ID = "rollout-workers";
    public static final int DEFAULT_MAX_INFLIGHT = 256;
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
    public static final Duration DEFAULT_REVOKE_GRACE = Duration.ofSeconds(10);
    /** Below the broker's default {@code offset.metadata.max.bytes} of 4096. */
    public static final int DEFAULT_MAX_COMMIT_METADATA_CHARS = 4000;

    public WorkerConfig {
        Objects.requireNonNull(kafka, "kafka");
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(workerId, "workerId");
        if (!"consumer".equals(groupProtocol) && !"classic".equals(groupProtocol)) {
            throw new IllegalArgumentException("group protocol must be \"consumer\" or \"classic\", got \"" + groupProtocol + "\"");
        }
        positive("max in-flight", maxInflight);
        positive("max in-flight per partition", maxInflightPerPartition);
        positive("max request bytes", maxRequestBytes);
        if (maxCommitMetadataChars < 64) {
            throw new IllegalArgumentException("max commit metadata chars must be at least 64, got " + maxCommitMetadataChars);
        }
        if (revokeGrace.isNegative() || commitInterval.isNegative() || pollTimeout.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
    }

    public static Builder builder(KafkaConnection kafka, TopicNames topics, String workerId) {
        return new Builder(kafka, topics, workerId);
    }

    private static void positive(String what, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + value);
        }
    }

    /** Builds a {@link WorkerConfig}; every setting has a default. */
    public static final class Builder {
        private final KafkaConnection kafka;
        private final TopicNames topics;
        private final String workerId;
        private String groupId = DEFAULT_GROUP_ID;
        private String groupProtocol = "consumer";
        private String groupInstanceId;
        private int maxInflight = DEFAULT_MAX_INFLIGHT;
        private Integer maxInflightPerPartition;
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private Duration revokeGrace = DEFAULT_REVOKE_GRACE;
        private Duration commitInterval = Duration.ofMillis(100);
        private int maxCommitMetadataChars = DEFAULT_MAX_COMMIT_METADATA_CHARS;
        private Duration pollTimeout = Duration.ofMillis(100);

        private Builder(KafkaConnection kafka, TopicNames topics, String workerId) {
            this.kafka = kafka;
            this.topics = topics;
            this.workerId = workerId;
        }

        public Builder groupId(String value) {
            groupId = value;
            return this;
        }

        /** {@code consumer} (KIP-848, the default) or {@code classic} (cooperative-sticky). */
        public Builder groupProtocol(String value) {
            groupProtocol = value;
            return this;
        }

        /** Static membership: a restart with the same id keeps the partitions without a rebalance. */
        public Builder groupInstanceId(String value) {
            groupInstanceId = value;
            return this;
        }

        public Builder maxInflight(int value) {
            maxInflight = value;
            return this;
        }

        /** Defaults to {@code maxInflight}: one partition may use every slot. */
        public Builder maxInflightPerPartition(int value) {
            maxInflightPerPartition = value;
            return this;
        }

        public Builder maxRequestBytes(int value) {
            maxRequestBytes = value;
            return this;
        }

        public Builder revokeGrace(Duration value) {
            revokeGrace = value;
            return this;
        }

        public Builder commitInterval(Duration value) {
            commitInterval = value;
            return this;
        }

        public Builder maxCommitMetadataChars(int value) {
            maxCommitMetadataChars = value;
            return this;
        }

        public Builder pollTimeout(Duration value) {
            pollTimeout = value;
            return this;
        }

        public WorkerConfig build() {
            int perPartition = maxInflightPerPartition == null ? maxInflight : maxInflightPerPartition;
            if (perPartition > maxInflight) {
                throw new IllegalArgumentException("max in-flight per partition (" + perPartition
                        + ") cannot exceed max in-flight (" + maxInflight + ")");
            }
            return new WorkerConfig(kafka, topics, groupId, workerId, groupProtocol, groupInstanceId, maxInflight,
                    perPartition, maxRequestBytes, revokeGrace, commitInterval, maxCommitMetadataChars, pollTimeout);
        }
    }
}
