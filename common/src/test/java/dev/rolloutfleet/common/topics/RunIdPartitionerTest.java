package dev.rolloutfleet.common.topics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.testing.KafkaCluster;
import dev.rolloutfleet.common.testing.RealKafka;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealKafka.class)
class RunIdPartitionerTest {

    @Test
    void aCaptureKeyLandsOnTheResultsPartitionOfItsRunFor200RandomRunIds(KafkaCluster kafka) throws Exception {
        TopicNames names = kafka.freshTopics(7);
        Random random = new Random(20261129);
        List<String> runIds = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            runIds.add(Long.toString(random.nextLong() & Long.MAX_VALUE, 36) + "-" + i);
        }
        List<Future<RecordMetadata>> results = new ArrayList<>();
        List<Future<RecordMetadata>> captures = new ArrayList<>();
        List<Future<RecordMetadata>> plain = new ArrayList<>();
        KafkaConnection connection = kafka.connection();
        var defaultConfig = connection.producerConfig("default-partitioner");
        defaultConfig.remove(org.apache.kafka.clients.producer.ProducerConfig.PARTITIONER_CLASS_CONFIG);
        try (KafkaProducer<String, byte[]> producer = connection.producer("partitioner-test");
                KafkaProducer<String, byte[]> defaultProducer =
                        new KafkaProducer<>(defaultConfig, new StringSerializer(), new ByteArraySerializer())) {
            for (String runId : runIds) {
                results.add(producer.send(new ProducerRecord<>(names.results(), runId, new byte[] {1})));
                captures.add(producer.send(new ProducerRecord<>(names.tokenCapture(), runId + "/1/x", new byte[] {2})));
                plain.add(defaultProducer.send(new ProducerRecord<>(names.results(), runId, new byte[] {3})));
            }
        }
        java.util.Set<Integer> used = new java.util.HashSet<>();
        for (int i = 0; i < runIds.size(); i++) {
            int resultPartition = results.get(i).get().partition();
            assertThat(captures.get(i).get().partition()).as("capture partition of %s", runIds.get(i)).isEqualTo(resultPartition);
            assertThat(plain.get(i).get().partition()).as("default partitioner agrees for %s", runIds.get(i)).isEqualTo(resultPartition);
            assertThat(RunIdPartitioner.partitionOf(runIds.get(i), 7)).isEqualTo(resultPartition);
            used.add(resultPartition);
        }
        assertThat(used).as("run ids spread over the partitions").hasSize(7);
    }
}
