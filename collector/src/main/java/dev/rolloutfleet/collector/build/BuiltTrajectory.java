package dev.rolloutfleet.collector.build;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * What {@link TrajectoryBuilder} made of one attempt's capture entries. A clean build has one
 * chain: {@code tokens}, a {@code lossMask} (1 on generated tokens, 0 on prompt and inter-turn
 * tokens), {@code logprobs} aligned to the tokens (0 where the mask is 0), and one span per turn.
 * A masked build has {@code masked=true}, a {@code maskReason}, and no tokens; {@code diagnostics}
 * says why either way. The sequences are primitive arrays (tens of thousands of ids per rollout);
 * they are not copied, so treat them as read-only.
 */
public record BuiltTrajectory(
        boolean masked,
        String maskReason,
        int[] tokens,
        int[] lossMask,
        double[] logprobs,
        List<TurnSpan> spans,
        ObjectNode diagnostics,
        BuildMetrics metrics) {

    /**
     * Where one turn sits in {@code tokens}: its new prompt tokens (the whole prompt for the first
     * turn, the inter-turn tokens after that) are {@code [promptStart, generationStart)}, its
     * generation {@code [generationStart, generationEnd)}.
     */
    public record TurnSpan(String callId, int promptStart, int generationStart, int generationEnd) {}

    /** Counts of one build, for metrics and diagnostics. */
    public record BuildMetrics(
            int calls,
            int emptyGenerationCalls,
            int chains,
            int roots,
            int quarantinedCalls,
            double quarantinedFraction,
            int deliveredCalls,
            double deliveredFraction,
            long generatedTokensCaptured,
            long generatedTokensDelivered) {}
}
