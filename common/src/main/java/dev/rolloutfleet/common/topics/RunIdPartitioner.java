package dev.rolloutfleet.common.topics;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.Partitioner;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.utils.Utils;

/**
 * Partitions by the {@code run_id} part of a key: everything before the first {@code /}. So
 * {@code run_id/attempt/call_id} on the token-capture topic lands on the partition that
 * {@code run_id} takes on the results topic. The hash is Kafka's default (murmur2 of the key
 * bytes), so a producer without this partitioner puts a plain {@code run_id} key on the same
 * partition. Keyless records are refused: every fleet topic is keyed.
 */
public final class RunIdPartitioner implements Partitioner {

    @Override
    public int partition(String topic, Object key, byte[] keyBytes, Object value, byte[] valueBytes, Cluster cluster) {
        if (keyBytes == null) {
            throw new IllegalArgumentException("records on " + topic + " need a key (the run_id)");
        }
        int partitions = cluster.partitionCountForTopic(topic);
        return partitionOf(runIdPart(keyBytes), partitions);
    }

    /** The partition of {@code runId} among {@code partitions}. */
    public static int partitionOf(String runId, int partitions) {
        return partitionOf(runId.getBytes(StandardCharsets.UTF_8), partitions);
    }

    private static int partitionOf(byte[] runId, int partitions) {
        return Utils.toPositive(Utils.murmur2(runId)) % partitions;
    }

    private static byte[] runIdPart(byte[] key) {
        for (int i = 0; i < key.length; i++) {
            if (key[i] == '/') {
                byte[] head = new byte[i];
                System.arraycopy(key, 0, head, 0, i);
                return head;
            }
        }
        return key;
    }

    @Override
    public void configure(Map<String, ?> configs) {}

    @Override
    public void close() {}
}
