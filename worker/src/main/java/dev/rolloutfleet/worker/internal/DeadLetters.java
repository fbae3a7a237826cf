package dev.rolloutfleet.worker.internal;

import dev.rolloutfleet.common.topics.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Headers;

/**
 * Routes a request that cannot be read to the DLQ: the original key and bytes, unchanged, with
 * headers naming the error, the source record and the worker, so {@code fleet replay --dlq} can
 * re-drive it after a fix. Thread-safe.
 */
final class DeadLetters {

    private final Producer<String, byte[]> producer;
    private final String dlqTopic;
    private final String workerId;

    DeadLetters(Producer<String, byte[]> producer, String dlqTopic, String workerId) {
        this.producer = producer;
        this.dlqTopic = dlqTopic;
        this.workerId = workerId;
    }

    Future<RecordMetadata> send(ConsumerRecord<String, byte[]> source, String code, String message) {
        // Partition 0 always exists; the DLQ's order does not matter and its key may be null.
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(dlqTopic, 0, source.key(), source.value());
        Headers headers = record.headers();
        headers.add(DeadLetterHeaders.ERROR_CODE, utf8(code));
        headers.add(DeadLetterHeaders.ERROR_MESSAGE, utf8(message));
        headers.add(DeadLetterHeaders.SOURCE_TOPIC, utf8(source.topic()));
        headers.add(DeadLetterHeaders.SOURCE_PARTITION, utf8(Integer.toString(source.partition())));
        headers.add(DeadLetterHeaders.SOURCE_OFFSET, utf8(Long.toString(source.offset())));
        headers.add(DeadLetterHeaders.WORKER, utf8(workerId));
        return producer.send(record);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
