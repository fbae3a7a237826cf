package dev.rolloutfleet.worker.rollout;

import dev.rolloutfleet.common.wire.RolloutResult.WorkerInfo;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * One execution of a request: the attempt id minted for it, where the request came from, and
 * when it was enqueued (the record timestamp, for queue delay).
 */
public record AttemptContext(String attempt, WorkerInfo worker, long enqueuedAtMs) {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A fresh attempt id: 12 hex digits, safe inside a {@code run_id/attempt/call_id} key. */
    public static String mintAttemptId() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
