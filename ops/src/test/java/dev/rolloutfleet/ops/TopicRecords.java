package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.testing.KafkaCluster;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Reads whole topics for assertions. Test helper. */
final class TopicRecords {

    private TopicRecords() {}

    static List<ConsumerRecord<String, byte[]>> scan(KafkaCluster kafka, String topic) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        TopicScan.scan(kafka.connection(), topic, out::add);
        return out;
    }
}
