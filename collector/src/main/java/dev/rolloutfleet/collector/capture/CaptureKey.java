package dev.rolloutfleet.collector.capture;

/**
 * A key of the token-capture topic: {@code run_id/attempt/call_id} for an entry, or
 * {@code run_id/attempt/!freeze}, {@code !retire}, {@code !retired}, {@code !incomplete:CAUSE} for the
 * protocol's records. Call ids never start with {@code !}.
 */
public record CaptureKey(String runId, String attempt, Kind kind, String name) {

    public enum Kind { ENTRY, FREEZE, RETIRE, RETIRED, INCOMPLETE }

    public static final String FREEZE = "!freeze";
    public static final String RETIRE = "!retire";
    public static final String RETIRED = "!retired";
    public static final String INCOMPLETE_PREFIX = "!incomplete:";

    /** Parses a key; null when it is not a capture key (no attempt part). */
    public static CaptureKey parse(String key) {
        if (key == null) {
            return null;
        }
        int first = key.indexOf('/');
        int second = first < 0 ? -1 : key.indexOf('/', first + 1);
        if (first <= 0 || second <= first + 1 || second == key.length() - 1) {
            return null;
        }
        String runId = key.substring(0, first);
        String attempt = key.substring(first + 1, second);
        String rest = key.substring(second + 1);
        return switch (rest) {
            case FREEZE -> new CaptureKey(runId, attempt, Kind.FREEZE, rest);
            case RETIRE -> new CaptureKey(runId, attempt, Kind.RETIRE, rest);
            case RETIRED -> new CaptureKey(runId, attempt, Kind.RETIRED, rest);
            default -> rest.startsWith(INCOMPLETE_PREFIX)
                    ? new CaptureKey(runId, attempt, Kind.INCOMPLETE, rest.substring(INCOMPLETE_PREFIX.length()))
                    : rest.startsWith("!") ? null : new CaptureKey(runId, attempt, Kind.ENTRY, rest);
        };
    }

    public static String entry(String runId, String attempt, String callId) {
        return runId + "/" + attempt + "/" + callId;
    }

    public static String of(String runId, String attempt, String suffix) {
        return runId + "/" + attempt + "/" + suffix;
    }

    /** {@code run_id/attempt}: the attempt this key belongs to. */
    public String attemptKey() {
        return runId + "/" + attempt;
    }

    @Override
    public String toString() {
        return switch (kind) {
            case ENTRY -> entry(runId, attempt, name);
            case INCOMPLETE -> of(runId, attempt, INCOMPLETE_PREFIX + name);
            default -> of(runId, attempt, name);
        };
    }
}
