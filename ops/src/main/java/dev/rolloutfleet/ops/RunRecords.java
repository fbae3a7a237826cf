package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.RunIdPartitioner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The records of one run on a topic keyed by run id: only the run's partition is read (the run
 * id's hash picks it, as the fleet's partitioner does), from its beginning to its current end.
 */
final class RunRecords {

    private RunRecords() {}

    static List<ConsumerRecord<String, byte[]>> read(KafkaConnection kafka, String topic, String runId) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "fleet-run-records")) {
            List<TopicPartition> partitions = TopicSlice.partitions(consumer, topic);
            int partition = RunIdPartitioner.partitionOf(runId, partitions.size());
            TopicPartition tp = new TopicPartition(topic, partition);
            long begin = consumer.beginningOffsets(List.of(tp)).get(tp);
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            new TopicSlice(topic, Map.of(partition, begin), Map.of(partition, end)).read(consumer, record -> {
                if (runId.equals(record.key())) {
                    out.add(record);
                }
            });
        }
        return out;
    }
}
