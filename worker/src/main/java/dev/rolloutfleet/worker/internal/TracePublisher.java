package dev.rolloutfleet.worker.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.TraceEvent;
import dev.rolloutfleet.worker.rollout.RolloutListener;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Publishes the trace events of one attempt to the traces topic, numbered from 0. Sends are
 * asynchronous; each is added to the attempt's {@link AttemptOutputs}, so the request's offset is
 * committed only once they are all acknowledged. Used by one rollout thread.
 */
final class TracePublisher implements RolloutListener {

    private final Producer<String, byte[]> producer;
    private final String topic;
    private final String runId;
    private final String attempt;
    private final Clock clock;
    private final AttemptOutputs outputs;
    /** Kept for the result when the request asks for {@code record.return_trace}; null otherwise. */
    private final List<TraceEvent> kept;
    private long seq;

    TracePublisher(Producer<String, byte[]> producer, String topic, String runId, String attempt, Clock clock,
            AttemptOutputs outputs, boolean keep) {
        this.kept = keep ? new ArrayList<>() : null;
        this.producer = producer;
        this.topic = topic;
        this.runId = runId;
        this.attempt = attempt;
        this.clock = clock;
        this.outputs = outputs;
    }

    /** The events published so far, when kept; empty otherwise. */
    List<TraceEvent> kept() {
        return kept == null ? List.of() : List.copyOf(kept);
    }

    @Override
    public void rolloutStarted(ObjectNode payload) {
        publish(TraceEvent.ROLLOUT_STARTED, payload);
    }

    @Override
    public void decisionStarted(ObjectNode payload) {
        publish(TraceEvent.DECISION_STARTED, payload);
    }

    @Override
    public void lmCall(ObjectNode payload) {
        publish(TraceEvent.LM_CALL, payload);
    }

    @Override
    public void envStep(ObjectNode payload) {
        publish(TraceEvent.ENV_STEP, payload);
    }

    @Override
    public void decisionReward(ObjectNode payload) {
        publish(TraceEvent.DECISION_REWARD, payload);
    }

    @Override
    public void rolloutFinished(ObjectNode payload) {
        publish(TraceEvent.ROLLOUT_FINISHED, payload);
    }

    private void publish(String type, ObjectNode payload) {
        TraceEvent event = new TraceEvent(runId, attempt, seq++, type, clock.millis(), payload);
        if (kept != null) {
            kept.add(event);
        }
        Future<RecordMetadata> sent = producer.send(new ProducerRecord<>(topic, runId, Json.encode(event)));
        outputs.add(sent);
    }
}
