package dev.rolloutfleet.worker.internal;

import dev.rolloutfleet.common.wire.InvalidRequestException;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RequestValidator;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.RolloutResult;
import dev.rolloutfleet.common.wire.RolloutResult.RolloutError;
import dev.rolloutfleet.common.wire.RolloutResult.WorkerInfo;
import dev.rolloutfleet.common.wire.RolloutStatus;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.common.wire.WireFormatException;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.worker.rollout.AttemptContext;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one request record into its outputs: bytes that cannot be read go to the DLQ; a request
 * that breaks a rule gets a result with {@code status=invalid}; anything else runs as a new
 * attempt whose trace events and result are published. Never throws for bad input. Thread-safe:
 * many rollouts may be handled at once.
 */
final class RequestHandler {

    private static final Logger log = LoggerFactory.getLogger(RequestHandler.class);

    private final Producer<String, byte[]> producer;
    private final TopicNames topics;
    private final String workerId;
    private final int maxRequestBytes;
    private final RolloutRunner runner;
    private final DeadLetters deadLetters;
    private final WorkerMetrics metrics;
    private final Clock clock;

    RequestHandler(Producer<String, byte[]> producer, TopicNames topics, String workerId, int maxRequestBytes,
            RolloutRunner runner, WorkerMetrics metrics, Clock clock) {
        this.producer = producer;
        this.topics = topics;
        this.workerId = workerId;
        this.maxRequestBytes = maxRequestBytes;
        this.runner = runner;
        this.deadLetters = new DeadLetters(producer, topics.requestsDlq(), workerId);
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Handles one record and returns its sends; the caller awaits them before committing. */
    AttemptOutputs handle(ConsumerRecord<String, byte[]> record) {
        AttemptOutputs outputs = new AttemptOutputs();
        byte[] value = record.value();
        if (value != null && value.length > maxRequestBytes) {
            deadLetter(record, outputs, "oversized_value", "the request is " + value.length
                    + " bytes, over the worker's limit of " + maxRequestBytes + " (--max-request-bytes)");
            return outputs;
        }
        RolloutRequest request;
        try {
            request = Json.decode(value, RolloutRequest.class);
        } catch (WireFormatException e) {
            deadLetter(record, outputs, e.code(), e.getMessage());
            return outputs;
        }
        String attempt = AttemptContext.mintAttemptId();
        WorkerInfo worker = new WorkerInfo(workerId, record.partition(), record.offset());
        try {
            RequestValidator.check(request);
        } catch (InvalidRequestException e) {
            if (request.runId() == null || request.runId().isEmpty()
                    || RequestValidator.validate(request).stream().anyMatch(v -> v.field().equals("run_id"))) {
                // Without a usable run_id there is no key for a result; the trainer finds it in the DLQ.
                deadLetter(record, outputs, e.code(), e.getMessage());
                return outputs;
            }
            RolloutResult invalid = new RolloutResult(SchemaVersion.CURRENT, request.runId(), attempt, request.groupId(),
                    RolloutStatus.INVALID, new RolloutError(e.code(), e.getMessage()), false, List.of(), null, 0,
                    null, worker, request.policyVersion(), null, null);
            metrics.finished(RolloutStatus.INVALID, 0);
            outputs.add(producer.send(new ProducerRecord<>(topics.results(), request.runId(), Json.encode(invalid))));
            return outputs;
        }
        metrics.started.mark();
        long now = clock.millis();
        metrics.queueDelay.update(Math.max(0, now - record.timestamp()), TimeUnit.MILLISECONDS);
        AttemptContext context = new AttemptContext(attempt, worker, record.timestamp());
        TracePublisher trace = new TracePublisher(producer, topics.traces(), request.runId(), attempt, clock, outputs);
        RolloutResult result = runner.run(request, context, trace);
        metrics.finished(result.status(), clock.millis() - now);
        outputs.add(producer.send(new ProducerRecord<>(topics.results(), request.runId(), Json.encode(result))));
        return outputs;
    }

    private void deadLetter(ConsumerRecord<String, byte[]> record, AttemptOutputs outputs, String code, String message) {
        log.warn("request at {}-{}@{} goes to the DLQ: {} ({})", record.topic(), record.partition(), record.offset(),
                code, message);
        metrics.deadLettered.mark();
        outputs.add(deadLetters.send(record, code, message));
    }
}
