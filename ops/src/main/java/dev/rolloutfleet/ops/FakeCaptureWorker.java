package dev.rolloutfleet.ops;

import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Publishes what a worker publishes for one participating rollout: its capture entries, then a
 * result naming them with the watermark of the last one. {@link Shape} chooses a clean three-turn
 * chain or one of the cases a collector must mask.
 */
final class FakeCaptureWorker {

    enum Shape {
        /** Three turns, each prompt extending the previous prompt and generation. */
        CLEAN,
        /** The second turn's prompt was re-tokenized and no longer extends the first: two roots. */
        DRIFTED,
        /** Participating, but no entry was written. */
        MISSING,
        /** The worker reports a failed capture write. */
        INCOMPLETE
    }

    private final KafkaProducer<String, byte[]> producer;
    private final TopicNames topics;

    FakeCaptureWorker(KafkaProducer<String, byte[]> producer, TopicNames topics) {
        this.producer = producer;
        this.topics = topics;
    }

    void publish(String runId, String attempt, Shape shape) throws Exception {
        List<List<Integer>> prompts = shape == Shape.DRIFTED
                ? List.of(List.of(1, 2, 3), List.of(1, 2, 99, 4, 5, 6), List.of(1, 2, 99, 4, 5, 6, 7, 8, 9))
                : List.of(List.of(1, 2, 3), List.of(1, 2, 3, 4, 5, 6), List.of(1, 2, 3, 4, 5, 6, 7, 8, 9));
        List<List<Integer>> generations = List.of(List.of(4, 5), List.of(7, 8), List.of(10));
        List<String> callIds = new ArrayList<>();
        Future<RecordMetadata> lastSend = null;
        if (shape != Shape.MISSING) {
            for (int i = 0; i < prompts.size(); i++) {
                String callId = "call-" + i;
                callIds.add(callId);
                CaptureEntry entry = new CaptureEntry(SchemaVersion.CURRENT, runId, attempt, callId, "main", "sim",
                        prompts.get(i), generations.get(i), generations.get(i).stream().map(t -> -0.25).toList(), null,
                        System.currentTimeMillis(), null);
                lastSend = producer.send(new ProducerRecord<>(topics.tokenCapture(), runId + "/" + attempt + "/" + callId,
                        Json.encode(entry)));
            }
        }
        // One run's entries share a partition and keep their order: the last one's offset is the watermark.
        RecordMetadata last = lastSend == null ? null : lastSend.get();
        RolloutResult.CaptureInfo capture = new RolloutResult.CaptureInfo("main", true, callIds, shape == Shape.INCOMPLETE,
                shape == Shape.INCOMPLETE ? List.of("capture_write_failed") : List.of(),
                last == null ? null : new RolloutResult.Watermark(last.partition(), last.offset()));
        RolloutResult result = new RolloutResult(SchemaVersion.CURRENT, runId, attempt, null, RolloutStatus.OK, null, false,
                List.of(), null, 6, null, null, null, capture, null);
        producer.send(new ProducerRecord<>(topics.results(), runId, Json.encode(result)));
    }
}
