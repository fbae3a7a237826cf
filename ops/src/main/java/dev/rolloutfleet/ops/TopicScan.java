package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/** Reads a whole topic, from its beginning to its end as of the call, without a consumer group. */
final class TopicScan {

    private TopicScan() {}

    static void scan(KafkaConnection kafka, String topic, Consumer<ConsumerRecord<String, byte[]>> sink) {
        try (KafkaConsumer<String, byte[]> consumer = kafka.consumer(null, "fleet-scan")) {
            TopicSlice.whole(consumer, topic).read(consumer, sink);
        }
    }
}
