package dev.rolloutfleet.worker.rollout;

/** The error codes a rollout can end with; trainers match on these strings. */
public final class FailureCode {

    public static final String POLICY_STEP_FAILED = "policy_step_failed";
    public static final String NO_TOOL_CALLS = "no_tool_calls";
    public static final String ENV_STEP_FAILED = "env_step_failed";
    public static final String NO_STEPS_EXECUTED = "no_steps_executed";
    public static final String UNKNOWN_ENV = "unknown_env";
    public static final String UNKNOWN_POLICY = "unknown_policy";
    public static final String DEADLINE_EXCEEDED = "deadline_exceeded";
    public static final String INTERNAL_ERROR = "internal_error";
    /** Ended by an abort command ({@code status=aborted}). */
    public static final String ABORTED = "aborted";
    /** Stopped because the worker lost the partition; never published. */
    public static final String CANCELLED = "cancelled";

    private FailureCode() {}
}
