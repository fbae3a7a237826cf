package dev.rolloutfleet.common.wire;

/**
 * Bytes that cannot be read as a wire value. {@link #code()} is a stable machine-readable reason
 * (for DLQ headers and metrics); the message says what is wrong in words. Not retriable: the same
 * bytes fail the same way every time, so the record is routed aside rather than retried.
 */
public final class WireFormatException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String code;

    public WireFormatException(String code, String message) {
        super(message);
        this.code = code;
    }

    public WireFormatException(String code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
