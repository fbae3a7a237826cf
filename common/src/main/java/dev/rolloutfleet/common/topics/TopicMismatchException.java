package dev.rolloutfleet.common.topics;

/** The topics exist but break an invariant the fleet relies on; the message says how to fix it. */
public final class TopicMismatchException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public TopicMismatchException(String message) {
        super(message);
    }
}
