package dev.rolloutfleet.worker;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/** Reads a whole topic from the beginning, without a group, until a condition holds. Test helper. */
final class TopicReader {

    private TopicReader() {}

    static List<ConsumerRecord<String, byte[]>> readUntil(KafkaConnection kafka, String topic,
            Predicate<List<ConsumerRecord<String, byte[]>>> done, Duration timeout) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "test-reader")) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!done.test(records)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out after " + timeout + " reading " + topic + "; got " + records.size() + " records");
                }
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }
}
