package dev.rolloutfleet.worker.env;

/** An environment could not be created, reset or stepped; the message says why. */
public class EnvironmentException extends Exception {

    private static final long serialVersionUID = 1L;

    public EnvironmentException(String message) {
        super(message);
    }

    public EnvironmentException(String message, Throwable cause) {
        super(message, cause);
    }
}
