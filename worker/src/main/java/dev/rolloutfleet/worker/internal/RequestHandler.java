package dev.rolloutfleet.worker.internal;

import dev.rolloutfleet.common.topics.TopicNames;
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
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.worker.capture.TokenCapture;
import dev.rolloutfleet.worker.rollout.AttemptContext;
import dev.rolloutfleet.worker.rollout.RolloutRunner;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one request record into its outputs: bytes that cannot be read go to the DLQ; a request
 * that breaks a rule gets a result with {@code status=invalid}; anything else runs as a new
 * attempt whose trace events and result are published. Never throws for bad input. Called on the
 * record's own virtual thread; thread-safe.
 */
final class RequestHandler {

    private static final Logger log = LoggerFactory.getLogger(RequestHandler.class);
    private static final int RESULT_SEND_ATTEMPTS = 4;

    private final Producer<String, byte[]> producer;
    private final TopicNames topics;
    private final String workerId;
    private final int maxRequestBytes;
    private final RolloutRunner runner;
    private final DeadLetters deadLetters;
    private final AbortRegistry aborts;
    private final WorkerMetrics metrics;
    private final Clock clock;

    RequestHandler(Producer<String, byte[]> producer, TopicNames topics, String workerId, int maxRequestBytes,
            RolloutRunner runner, AbortRegistry aborts, WorkerMetrics metrics, Clock clock) {
        this.producer = producer;
        this.topics = topics;
        this.workerId = workerId;
        this.maxRequestBytes = maxRequestBytes;
        this.runner = runner;
        this.deadLetters = new DeadLetters(producer, topics.requestsDlq(), workerId);
        this.aborts = aborts;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Handles one record on behalf of {@code task}.
     *
     * @return true when every output is acknowledged by the broker, so the offset may be committed;
     *     false when the task was cancelled or its result could not be published
     */
    boolean handle(ConsumerRecord<String, byte[]> record, RolloutTask task) {
        byte[] value = record.value();
        if (value != null && value.length > maxRequestBytes) {
            return deadLetter(record, task, "oversized_value", "the request is " + value.length
                    + " bytes, over the worker's limit of " + maxRequestBytes + " (--max-request-bytes)");
        }
        RolloutRequest request;
        try {
            request = Json.decode(value, RolloutRequest.class);
        } catch (WireFormatException e) {
            return deadLetter(record, task, e.code(), e.getMessage());
        }
        String attempt = AttemptContext.mintAttemptId();
        WorkerInfo worker = new WorkerInfo(workerId, record.partition(), record.offset());
        try {
            RequestValidator.check(request);
        } catch (InvalidRequestException e) {
            if (e.violations().stream().anyMatch(v -> v.field().equals("run_id"))) {
                // Without a usable run_id there is no key for a result; the trainer finds it in the DLQ.
                return deadLetter(record, task, e.code(), e.getMessage());
            }
            RolloutResult invalid = new RolloutResult(SchemaVersion.CURRENT, request.runId(), attempt, request.groupId(),
                    RolloutStatus.INVALID, new RolloutError(e.code(), e.getMessage()), false, List.of(), null, 0,
                    null, worker, request.policyVersion(), null, withMetadata(null, request.metadata()));
            if (!task.beginPublishing()) {
                return false;
            }
            metrics.finished(RolloutStatus.INVALID, 0);
            return publishResult(invalid, new AttemptOutputs());
        }
        aborts.register(request.runId(), task);
        try {
            return run(record, request, attempt, worker, task);
        } finally {
            aborts.unregister(task);
        }
    }

    private boolean run(ConsumerRecord<String, byte[]> record, RolloutRequest request, String attempt, WorkerInfo worker,
            RolloutTask task) {
        metrics.started.mark();
        long startedAt = clock.millis();
        metrics.queueDelay.update(Math.max(0, startedAt - record.timestamp()), TimeUnit.MILLISECONDS);
        TokenCapture capture = new TokenCapture(producer, topics.tokenCapture(), request.runId(), attempt,
                request.policy().policyName(), TokenCapture.participates(request), TopicLayout.DEFAULT_MAX_MESSAGE_BYTES - 4096);
        AttemptContext context = new AttemptContext(attempt, worker, record.timestamp(), capture);
        AttemptOutputs outputs = new AttemptOutputs();
        boolean returnTrace = request.record() != null && Boolean.TRUE.equals(request.record().returnTrace());
        TracePublisher trace = new TracePublisher(producer, topics.traces(), request.runId(), attempt, clock, outputs,
                returnTrace);
        RolloutResult ran = runner.run(request, context, trace, task);
        if (!task.beginPublishing()) {
            return false;
        }
        // Capture entries go before the result: the result names them and carries their watermark.
        RolloutResult result = new RolloutResult(ran.schemaVersion(), ran.runId(), ran.attempt(), ran.groupId(), ran.status(),
                ran.error(), ran.aborted(), ran.trajectories(), ran.metrics(), ran.opsExecuted(), ran.timing(), ran.worker(),
                ran.policyVersion(), capture.finish(), withMetadata(withTrace(ran.extra(), returnTrace, request, trace), request.metadata()));
        metrics.finished(result.status(), clock.millis() - startedAt);
        return publishResult(result, outputs);
    }

    /** {@code record.return_trace}: the attempt's trace events travel in the result too, under {@code trace}. */
    /** The request's {@code metadata}, passed through to its result (e.g. {@code replay_of}). */
    private static final String METADATA = "metadata";

    private static java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> withMetadata(
            java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> extra, com.fasterxml.jackson.databind.node.ObjectNode metadata) {
        if (metadata == null) {
            return extra;
        }
        java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> out = extra == null ? new java.util.LinkedHashMap<>()
                : new java.util.LinkedHashMap<>(extra);
        out.put(METADATA, metadata);
        return out;
    }

    private static java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> withTrace(
            java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> extra, boolean returnTrace, RolloutRequest request,
            TracePublisher trace) {
        if (!returnTrace) {
            return extra;
        }
        java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> out = new java.util.LinkedHashMap<>(extra);
        String format = request.record().traceFormat() == null ? "compact" : request.record().traceFormat();
        com.fasterxml.jackson.databind.node.ObjectNode node = Json.object().put("format", format);
        node.set("events", Json.tree(trace.kept()));
        out.put("trace", node);
        return out;
    }

    /**
     * Publishes the result and waits for it and the attempt's trace events. A result the broker
     * refuses for good (too large, say) is replaced by a small failed result saying why, so the
     * run still ends visibly; trace events that fail are counted and logged but do not hold the
     * offset back, since the result is what the trainer waits for.
     */
    private boolean publishResult(RolloutResult result, AttemptOutputs outputs) {
        boolean delivered = sendWithRetry(result);
        if (!delivered) {
            RolloutResult fallback = new RolloutResult(SchemaVersion.CURRENT, result.runId(), result.attempt(),
                    result.groupId(), RolloutStatus.FAILED, new RolloutError("output_rejected",
                            "the broker refused this rollout's result (" + Json.encode(result).length
                                    + " bytes); see the worker log"), false, List.of(), result.metrics(),
                    result.opsExecuted(), result.timing(), result.worker(), result.policyVersion(), result.capture(),
                    withMetadata(null, (com.fasterxml.jackson.databind.node.ObjectNode) result.extra().get(METADATA)));
            delivered = sendWithRetry(fallback);
        }
        int failedTraces = outputs.awaitAll();
        if (failedTraces > 0) {
            metrics.outputFailures.mark(failedTraces);
            log.error("{} trace events of run {} attempt {} could not be published", failedTraces, result.runId(),
                    result.attempt());
        }
        return delivered;
    }

    private boolean sendWithRetry(RolloutResult result) {
        byte[] bytes = Json.encode(result);
        for (int attempt = 1; ; attempt++) {
            Future<RecordMetadata> send = producer.send(new ProducerRecord<>(topics.results(), result.runId(), bytes));
            try {
                send.get();
                return true;
            } catch (ExecutionException e) {
                metrics.outputFailures.mark();
                boolean retriable = e.getCause() instanceof RetriableException;
                if (!retriable || attempt >= RESULT_SEND_ATTEMPTS) {
                    log.error("the result of run {} attempt {} could not be published ({})", result.runId(),
                            result.attempt(), retriable ? "gave up after " + attempt + " tries" : "not retriable", e.getCause());
                    return false;
                }
                log.warn("publishing the result of run {} failed ({}); retrying", result.runId(), e.getCause().toString());
                if (!sleep(500L << attempt)) {
                    return false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    private boolean deadLetter(ConsumerRecord<String, byte[]> record, RolloutTask task, String code, String message) {
        if (!task.beginPublishing()) {
            return false;
        }
        log.warn("request at {}-{}@{} goes to the DLQ: {} ({})", record.topic(), record.partition(), record.offset(),
                code, message);
        metrics.deadLettered.mark();
        try {
            deadLetters.send(record, code, message).get();
            return true;
        } catch (ExecutionException e) {
            metrics.outputFailures.mark();
            log.error("request at {}-{}@{} could not be sent to the DLQ; it stays unfinished", record.topic(),
                    record.partition(), record.offset(), e.getCause());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean sleep(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
