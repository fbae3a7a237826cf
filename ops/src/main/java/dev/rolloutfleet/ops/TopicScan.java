package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/** Reads a whole topic, from its beginning to its end as of the call, without a consumer group. */
final class TopicScan {

    private TopicScan() {}

    static void scan(KafkaConnection kafka, String topic, Consumer<ConsumerRecord<String, byte[]>> sink) {
        try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "fleet-scan")) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                consumer.poll(Duration.ofMillis(200)).forEach(sink);
            }
        }
    }
}
