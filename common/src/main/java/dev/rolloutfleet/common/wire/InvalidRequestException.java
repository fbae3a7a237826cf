package dev.rolloutfleet.common.wire;

import java.util.List;

/**
 * A request that parsed but breaks the contract. {@link #code()} is the error code of the first
 * violation (e.g. {@code invalid_env_params}); the message lists every violation, each naming the
 * field, the rule and the value received.
 */
public final class InvalidRequestException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient List<RequestValidator.Violation> violations;

    InvalidRequestException(List<RequestValidator.Violation> violations) {
        super(String.join("; ", violations.stream().map(RequestValidator.Violation::message).toList()));
        this.violations = List.copyOf(violations);
    }

    public String code() {
        return violations.get(0).code();
    }

    public List<RequestValidator.Violation> violations() {
        return violations;
    }
}
