package dev.rolloutfleet.worker.rollout;

import dev.rolloutfleet.common.wire.RolloutRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** The seed of a rollout: {@code env.seed} when given, else the low 32 bits of sha256(run_id). */
public final class RolloutSeeds {

    private RolloutSeeds() {}

    public static long seedOf(RolloutRequest request) {
        if (request.env() != null && request.env().seed() != null) {
            return request.env().seed();
        }
        return fromRunId(request.runId());
    }

    /** Low 32 bits of the digest read as one big-endian number, i.e. its last four bytes; 0..2^32-1. */
    public static long fromRunId(String runId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(runId.getBytes(StandardCharsets.UTF_8));
            long low = 0;
            for (int i = digest.length - 4; i < digest.length; i++) {
                low = (low << 8) | (digest[i] & 0xff);
            }
            return low;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
