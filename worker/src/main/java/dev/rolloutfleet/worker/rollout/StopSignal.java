package dev.rolloutfleet.worker.rollout;

/** Why a rollout must stop before its ops run out. */
public record StopSignal(Kind kind, String message) {

    public enum Kind {
        /** An abort command for the run: the result says {@code aborted}. */
        ABORT,
        /** {@code safety.max_time_s} passed: the result says {@code failed}, {@code deadline_exceeded}. */
        DEADLINE,
        /** The worker lost the request's partition: the result is not published; the new owner runs it. */
        CANCEL
    }
}
