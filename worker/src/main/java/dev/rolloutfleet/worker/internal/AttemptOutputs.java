package dev.rolloutfleet.worker.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The sends of one request's outputs (trace events, result, or DLQ copy). The request counts as
 * finished only when {@link #awaitAcknowledged()} returns: every output is on the broker.
 * Confined to one thread at a time.
 */
final class AttemptOutputs {

    private final List<Future<RecordMetadata>> pending = new ArrayList<>();

    void add(Future<RecordMetadata> send) {
        pending.add(send);
    }

    List<Future<RecordMetadata>> pending() {
        return List.copyOf(pending);
    }

    /**
     * Waits for every send. The producer retries retriable errors itself until its delivery
     * timeout, so a failure here is final.
     *
     * @throws ExecutionException with the first send's failure
     */
    void awaitAcknowledged() throws ExecutionException, InterruptedException {
        for (Future<RecordMetadata> send : pending) {
            send.get();
        }
    }
}
