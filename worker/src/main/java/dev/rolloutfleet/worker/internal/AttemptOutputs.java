package dev.rolloutfleet.worker.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The trace-event sends of one attempt, awaited before the attempt counts as finished. Confined to
 * the attempt's thread.
 */
final class AttemptOutputs {

    private final List<Future<RecordMetadata>> pending = new ArrayList<>();

    void add(Future<RecordMetadata> send) {
        pending.add(send);
    }

    /**
     * Waits for every send; the producer has already retried retriable errors until its delivery
     * timeout, so a failure here is final.
     *
     * @return how many sends failed
     */
    int awaitAll() {
        int failed = 0;
        for (Future<RecordMetadata> send : pending) {
            try {
                send.get();
            } catch (ExecutionException e) {
                failed++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return failed + 1;
            }
        }
        return failed;
    }
}
