package dev.rolloutfleet.collector;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything a {@link Collector} needs. {@code groupInstanceId} (optional) turns on static
 * membership: a collector restarted with the same id, on the same data directory, gets its
 * partitions back without a rebalance.
 */
public record CollectorConfig(
        KafkaConnection kafka,
        TopicNames topics,
        String groupId,
        String collectorId,
        Path dataDir,
        long maxSegmentBytes,
        Duration pollTimeout,
        Duration captureWait,
        Duration retiredTtl,
        String groupInstanceId,
        MaskLimit maskLimit,
        GroupCommit groupCommit) {

    /**
     * When gathered results are written and fsynced together: once they hold {@code maxBytes} of
     * result values, or the oldest has waited {@code maxDelay}, whichever comes first. One fsync
     * covers the whole batch.
     */
    public record GroupCommit(long maxBytes, Duration maxDelay) {
        public static final GroupCommit DEFAULT = new GroupCommit(4L * 1024 * 1024, Duration.ofMillis(20));

        public GroupCommit {
            if (maxBytes < 1) {
                throw new IllegalArgumentException("--group-commit-bytes must be positive, got " + maxBytes);
            }
            if (maxDelay.isNegative()) {
                throw new IllegalArgumentException("--group-commit-delay must not be negative, got " + maxDelay);
            }
        }
    }

    /**
     * The mask-fraction guard: once at least {@code minSamples} participating samples were built and
     * more than {@code maxFraction} of them were masked, the collector reports unhealthy, logs the
     * counts per reason, and with {@code stopConsuming} stops consuming results.
     */
    public record MaskLimit(double maxFraction, int minSamples, boolean stopConsuming) {
        public static final MaskLimit DEFAULT = new MaskLimit(0.5, 100, false);

        public MaskLimit {
            if (maxFraction < 0 || maxFraction > 1) {
                throw new IllegalArgumentException("--max-mask-fraction must be between 0 and 1, got " + maxFraction);
            }
            if (minSamples < 1) {
                throw new IllegalArgumentException("--mask-min-samples must be at least 1, got " + minSamples);
            }
        }
    }

    public static final String DEFAULT_GROUP_ID = "rollout-collectors";
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 256L * 1024 * 1024;
    public static final Duration DEFAULT_CAPTURE_WAIT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_RETIRED_TTL = Duration.ofDays(7);

    public CollectorConfig {
        Objects.requireNonNull(kafka, "kafka");
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(collectorId, "collectorId");
        Objects.requireNonNull(dataDir, "dataDir");
        if (maxSegmentBytes <= 0) {
            throw new IllegalArgumentException("max segment bytes must be positive, got " + maxSegmentBytes);
        }
    }

    public static CollectorConfig defaults(KafkaConnection kafka, TopicNames topics, String collectorId, Path dataDir) {
        return new CollectorConfig(kafka, topics, DEFAULT_GROUP_ID, collectorId, dataDir, DEFAULT_MAX_SEGMENT_BYTES,
                Duration.ofMillis(200), DEFAULT_CAPTURE_WAIT, DEFAULT_RETIRED_TTL, null,
                MaskLimit.DEFAULT, GroupCommit.DEFAULT);
    }

    public CollectorConfig withGroupId(String newGroupId) {
        return new CollectorConfig(kafka, topics, newGroupId, collectorId, dataDir, maxSegmentBytes, pollTimeout,
                captureWait, retiredTtl, groupInstanceId, maskLimit, groupCommit);
    }

    public CollectorConfig withCaptureWait(Duration wait) {
        return new CollectorConfig(kafka, topics, groupId, collectorId, dataDir, maxSegmentBytes, pollTimeout, wait,
                retiredTtl, groupInstanceId, maskLimit, groupCommit);
    }

    public CollectorConfig withGroupCommit(GroupCommit commit) {
        return new CollectorConfig(kafka, topics, groupId, collectorId, dataDir, maxSegmentBytes, pollTimeout, captureWait,
                retiredTtl, groupInstanceId, maskLimit, commit);
    }

    public CollectorConfig withMaskLimit(MaskLimit limit) {
        return new CollectorConfig(kafka, topics, groupId, collectorId, dataDir, maxSegmentBytes, pollTimeout, captureWait,
                retiredTtl, groupInstanceId, limit, groupCommit);
    }
}
