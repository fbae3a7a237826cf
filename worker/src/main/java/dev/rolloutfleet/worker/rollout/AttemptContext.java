package dev.rolloutfleet.worker.rollout;

import dev.rolloutfleet.common.wire.RolloutResult.WorkerInfo;
import dev.rolloutfleet.worker.capture.TokenCapture;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One execution of a request: the attempt id minted for it, where the request came from, and
 * when it was enqueued (the record timestamp, for queue delay).
 */
public record AttemptContext(String attempt, WorkerInfo worker, long enqueuedAtMs, TokenCapture capture) {

    public AttemptContext(String attempt, WorkerInfo worker, long enqueuedAtMs) {
        this(attempt, worker, enqueuedAtMs, TokenCapture.none(null));
    }

    /**
     * A fresh attempt id: 12 hex digits (48 random bits), safe inside a {@code run_id/attempt/call_id}
     * key. Ids only need to differ between the few attempts of one run, not to be unguessable.
     */
    public static String mintAttemptId() {
        return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()).substring(4);
    }
}
