package dev.rolloutfleet.common.topics;

/**
 * Header names on {@code rollout.dlq} records. The record keeps the original key and bytes; these
 * headers say why it was refused and where it came from, so it can be re-driven after a fix.
 */
public final class DeadLetterHeaders {

    public static final String ERROR_CODE = "fleet.error.code";
    public static final String ERROR_MESSAGE = "fleet.error.message";
    public static final String SOURCE_TOPIC = "fleet.source.topic";
    public static final String SOURCE_PARTITION = "fleet.source.partition";
    public static final String SOURCE_OFFSET = "fleet.source.offset";
    public static final String WORKER = "fleet.worker";
    /** Set on a record that {@code fleet replay --dlq} re-published: {@code DLQ_PARTITION:OFFSET}. */
    public static final String REDRIVEN_FROM = "fleet.redriven.from";

    private DeadLetterHeaders() {}
}
