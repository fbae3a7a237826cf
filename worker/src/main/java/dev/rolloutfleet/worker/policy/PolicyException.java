package dev.rolloutfleet.worker.policy;

/** A policy could not decide; the message says why. */
public class PolicyException extends Exception {

    private static final long serialVersionUID = 1L;

    public PolicyException(String message) {
        super(message);
    }

    public PolicyException(String message, Throwable cause) {
        super(message, cause);
    }
}
