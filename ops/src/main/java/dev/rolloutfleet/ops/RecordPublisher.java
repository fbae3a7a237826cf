package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Publishes a batch of records and returns once the broker acknowledged every one (or throws). */
final class RecordPublisher {

    private RecordPublisher() {}

    static void publishAll(KafkaConnection kafka, String clientId, List<ProducerRecord<String, byte[]>> records)
            throws ExecutionException, InterruptedException {
        try (KafkaProducer<String, byte[]> producer = kafka.producer(clientId)) {
            List<Future<?>> sends = new ArrayList<>(records.size());
            records.forEach(r -> sends.add(producer.send(r)));
            for (Future<?> send : sends) {
                send.get();
            }
        }
    }

    /** Requests keyed as the fleet expects: by group when they have one, else by run. */
    static List<ProducerRecord<String, byte[]>> requests(String topic, List<RolloutRequest> requests) {
        return requests.stream().map(r -> new ProducerRecord<>(topic, r.kafkaKey(), Json.encode(r))).toList();
    }
}
