package dev.rolloutfleet.collector.build;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.build.BuiltTrajectory.BuildMetrics;
import dev.rolloutfleet.collector.build.BuiltTrajectory.TurnSpan;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.Json;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Rebuilds one trainable token sequence from the captured inference calls of one attempt, by
 * prefix merging. Calls that generated nothing are dropped (and counted). Calls are ordered by
 * prompt length, then {@code call_id}. A call's parent is the earlier call whose prompt plus
 * generation is the longest prefix of this call's prompt; with none it is a root. When several
 * candidates have that identical sequence the call is ambiguous and quarantined, with its
 * descendants. Retries (calls with identical prompts) keep the one that has a non-quarantined
 * child, else the smallest {@code call_id}; the others are quarantined and reported. Every leaf
 * ends a chain; exactly one chain from exactly one root is a clean sample, anything else is masked.
 *
 * <p>Finding parents uses prefix hashes verified by exact comparison, so a 1,000-turn, 32k-token
 * rollout costs time linear in its total prompt length. Stateless and thread-safe.
 */
public final class TrajectoryBuilder {

    private static final long BASE = 0x9E3779B97F4A7C15L;
    private static final String QUARANTINE_AMBIGUOUS = "ambiguous";
    private static final String QUARANTINE_ANCESTOR = "ancestor_quarantined";
    private static final String QUARANTINE_RETRY = "retry";

    /**
     * @param entries the frozen snapshot of one attempt
     * @param incompleteReasons why the snapshot is known to be incomplete; empty when it is not
     */
    public BuiltTrajectory build(List<CaptureEntry> entries, List<String> incompleteReasons) {
        ObjectNode diagnostics = Json.object();
        if (entries.isEmpty()) {
            // Known-incomplete evidence explains an empty snapshot better than "missing" does.
            if (!incompleteReasons.isEmpty()) {
                diagnostics.set("incomplete_reasons", strings(incompleteReasons));
                return masked(MaskReason.INCOMPLETE, diagnostics, new BuildMetrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
            }
            return masked(MaskReason.MISSING, diagnostics, new BuildMetrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        }
        ArrayNode malformed = Json.mapper().createArrayNode();
        for (CaptureEntry entry : entries) {
            String problem = problemOf(entry);
            if (problem != null) {
                malformed.add(Json.object().put("call_id", entry.callId()).put("problem", problem));
            }
        }
        if (!malformed.isEmpty()) {
            diagnostics.set("malformed", malformed);
            return masked(MaskReason.MALFORMED, diagnostics, new BuildMetrics(entries.size(), 0, 0, 0, 0, 0, 0, 0, 0, 0));
        }

        List<Call> calls = new ArrayList<>();
        ArrayNode dropped = Json.mapper().createArrayNode();
        long generatedCaptured = 0;
        for (CaptureEntry entry : entries) {
            if (entry.generationTokenIds().isEmpty()) {
                dropped.add(entry.callId());
            } else {
                Call call = new Call(entry);
                calls.add(call);
                generatedCaptured += call.gen.length;
            }
        }
        if (!dropped.isEmpty()) {
            diagnostics.set("dropped_empty_generation", dropped);
        }
        if (!incompleteReasons.isEmpty()) {
            diagnostics.set("incomplete_reasons", strings(incompleteReasons));
            return masked(MaskReason.INCOMPLETE, diagnostics, new BuildMetrics(entries.size(), dropped.size(), 0, 0, 0, 0,
                    0, 0, generatedCaptured, 0));
        }
        if (calls.isEmpty()) {
            return masked(MaskReason.EMPTY_TOKENS, diagnostics, new BuildMetrics(entries.size(), dropped.size(), 0, 0, 0, 0,
                    0, 0, 0, 0));
        }

        calls.sort(Comparator.<Call>comparingInt(c -> c.prompt.length).thenComparing(c -> c.id));
        linkParents(calls);
        resolveRetries(calls);

        List<Call> roots = new ArrayList<>();
        List<Call> leaves = new ArrayList<>();
        ArrayNode quarantined = Json.mapper().createArrayNode();
        boolean ambiguous = false;
        for (Call call : calls) {
            if (call.quarantine != null) {
                ObjectNode q = Json.object().put("call_id", call.id).put("reason", call.quarantine);
                if (call.ambiguousWith != null) {
                    q.set("candidates", strings(call.ambiguousWith));
                }
                quarantined.add(q);
                ambiguous |= QUARANTINE_AMBIGUOUS.equals(call.quarantine);
                continue;
            }
            if (call.parent == null) {
                roots.add(call);
            }
            if (call.children.stream().allMatch(child -> child.quarantine != null)) {
                leaves.add(call);
            }
        }
        if (!quarantined.isEmpty()) {
            diagnostics.set("quarantined", quarantined);
        }
        diagnostics.set("roots", strings(roots.stream().map(c -> c.id).toList()));
        diagnostics.set("leaves", strings(leaves.stream().map(c -> c.id).toList()));

        int quarantinedCount = quarantined.size();
        String reason = ambiguous ? MaskReason.AMBIGUOUS
                : roots.size() > 1 ? MaskReason.MULTI_ROOT
                : leaves.size() > 1 ? MaskReason.MULTI_CHAIN
                : null;
        if (reason != null) {
            return masked(reason, diagnostics, new BuildMetrics(entries.size(), dropped.size(), leaves.size(), roots.size(),
                    quarantinedCount, (double) quarantinedCount / calls.size(), 0, 0, generatedCaptured, 0));
        }
        return chain(leaves.get(0), diagnostics, entries.size(), dropped.size(), quarantinedCount, calls.size(),
                generatedCaptured);
    }

    /** Finds each call's parent: the longest earlier sequence that prefixes its prompt. */
    private static void linkParents(List<Call> calls) {
        // Calls by the length of their full sequence (prompt + generation), longest first.
        TreeMap<Integer, List<Call>> bySequenceLength = new TreeMap<>(Comparator.reverseOrder());
        for (Call call : calls) {
            bySequenceLength.computeIfAbsent(call.sequenceLength(), k -> new ArrayList<>()).add(call);
        }
        for (Call child : calls) {
            long[] prefix = prefixHashes(child.prompt);
            child.promptHash = prefix[child.prompt.length];
            List<Call> matches = List.of();
            for (Map.Entry<Integer, List<Call>> group : bySequenceLength.tailMap(child.prompt.length, true).entrySet()) {
                int length = group.getKey();
                List<Call> found = new ArrayList<>(1);
                for (Call candidate : group.getValue()) {
                    if (candidate != child && candidate.sequenceHash == prefix[length] && candidate.prefixes(child.prompt)) {
                        found.add(candidate);
                    }
                }
                if (!found.isEmpty()) {
                    matches = found;
                    break;
                }
            }
            if (matches.size() > 1) {
                child.quarantine = QUARANTINE_AMBIGUOUS;
                child.ambiguousWith = matches.stream().map(c -> c.id).toList();
            } else if (matches.size() == 1) {
                Call parent = matches.get(0);
                child.parent = parent;
                parent.children.add(child);
                if (parent.quarantine != null) {
                    child.quarantine = QUARANTINE_ANCESTOR;
                }
            }
        }
    }

    /** Among calls with identical prompts, keeps the one that leads on, else the smallest call_id. */
    private static void resolveRetries(List<Call> calls) {
        Map<Long, List<Call>> byPromptHash = new HashMap<>();
        for (Call call : calls) {
            if (call.quarantine == null) {
                byPromptHash.computeIfAbsent(call.promptHash, k -> new ArrayList<>()).add(call);
            }
        }
        for (List<Call> sameHash : byPromptHash.values()) {
            for (List<Call> siblings : groupByExactPrompt(sameHash)) {
                if (siblings.size() < 2) {
                    continue;
                }
                List<Call> leading = siblings.stream()
                        .filter(c -> c.children.stream().anyMatch(child -> child.quarantine == null)).toList();
                Call keep = leading.isEmpty() ? siblings.stream().min(Comparator.comparing(c -> c.id)).orElseThrow() : null;
                for (Call sibling : siblings) {
                    boolean kept = keep != null ? sibling == keep : leading.contains(sibling);
                    if (!kept) {
                        sibling.quarantine = QUARANTINE_RETRY;
                    }
                }
            }
        }
    }

    private static List<List<Call>> groupByExactPrompt(List<Call> sameHash) {
        List<List<Call>> groups = new ArrayList<>();
        for (Call call : sameHash) {
            List<Call> home = null;
            for (List<Call> group : groups) {
                if (java.util.Arrays.equals(group.get(0).prompt, call.prompt)) {
                    home = group;
                    break;
                }
            }
            if (home == null) {
                home = new ArrayList<>();
                groups.add(home);
            }
            home.add(call);
        }
        return groups;
    }

    private static int[] ints(List<Integer> ids) {
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ids.get(i);
        }
        return out;
    }

    private static BuiltTrajectory chain(Call leaf, ObjectNode diagnostics, int entryCount, int emptyCount,
            int quarantinedCount, int nonEmptyCalls, long generatedCaptured) {
        List<Call> path = new ArrayList<>();
        for (Call c = leaf; c != null; c = c.parent) {
            path.add(0, c);
        }
        int length = 0;
        for (Call call : path) {
            length = Math.max(length, call.prompt.length) + call.gen.length;
        }
        int[] tokens = new int[length];
        int[] mask = new int[length];
        double[] logprobs = new double[length];
        List<TurnSpan> spans = new ArrayList<>();
        int size = 0;
        long delivered = 0;
        for (Call call : path) {
            int promptStart = size;
            // Everything of this prompt beyond what the chain already holds is new: the whole
            // prompt for the root, the inter-turn tokens (tool results, template) after that.
            for (int i = size; i < call.prompt.length; i++) {
                tokens[size++] = call.prompt[i];
            }
            int generationStart = size;
            for (int i = 0; i < call.gen.length; i++) {
                tokens[size] = call.gen[i];
                mask[size] = 1;
                logprobs[size++] = call.logprobs[i];
            }
            delivered += call.gen.length;
            spans.add(new TurnSpan(call.id, promptStart, generationStart, size));
        }
        BuildMetrics metrics = new BuildMetrics(entryCount, emptyCount, 1, 1, quarantinedCount,
                (double) quarantinedCount / nonEmptyCalls, path.size(), (double) path.size() / nonEmptyCalls,
                generatedCaptured, delivered);
        return new BuiltTrajectory(false, null, tokens, mask, logprobs, spans, diagnostics, metrics);
    }

    private static BuiltTrajectory masked(String reason, ObjectNode diagnostics, BuildMetrics metrics) {
        return new BuiltTrajectory(true, reason, new int[0], new int[0], new double[0], List.of(), diagnostics, metrics);
    }

    private static String problemOf(CaptureEntry entry) {
        if (entry.callId() == null || entry.callId().isEmpty()) {
            return "call_id is missing";
        }
        if (entry.promptTokenIds() == null) {
            return "prompt_token_ids is missing";
        }
        if (entry.generationTokenIds() == null) {
            return "generation_token_ids is missing";
        }
        if (entry.generationLogprobs() == null) {
            return "generation_logprobs is missing";
        }
        if (entry.generationLogprobs().size() != entry.generationTokenIds().size()) {
            return "generation_logprobs has " + entry.generationLogprobs().size() + " values for "
                    + entry.generationTokenIds().size() + " generated tokens";
        }
        for (List<Integer> ids : List.of(entry.promptTokenIds(), entry.generationTokenIds())) {
            for (Integer id : ids) {
                if (id == null || id < 0) {
                    return "token ids must be non-negative integers, got " + id;
                }
            }
        }
        for (Double logprob : entry.generationLogprobs()) {
            if (logprob == null || logprob.isNaN() || logprob > 0) {
                return "log-probs must be numbers <= 0, got " + logprob;
            }
        }
        return null;
    }

    private static ArrayNode strings(List<String> values) {
        ArrayNode array = Json.mapper().createArrayNode();
        values.forEach(array::add);
        return array;
    }

    /** h[i] is the hash of the first i tokens. */
    private static long[] prefixHashes(int[] tokens) {
        long[] h = new long[tokens.length + 1];
        for (int i = 0; i < tokens.length; i++) {
            h[i + 1] = h[i] * BASE + tokens[i] + 1;
        }
        return h;
    }

    /** One non-empty call while the builder links it. */
    private static final class Call {
        final String id;
        final int[] prompt;
        final int[] gen;
        final double[] logprobs;
        final long sequenceHash;
        final List<Call> children = new ArrayList<>(1);
        long promptHash;
        Call parent;
        String quarantine;
        List<String> ambiguousWith;

        Call(CaptureEntry entry) {
            this.id = entry.callId();
            this.prompt = ints(entry.promptTokenIds());
            this.gen = ints(entry.generationTokenIds());
            List<Double> lp = entry.generationLogprobs();
            this.logprobs = new double[lp.size()];
            for (int i = 0; i < logprobs.length; i++) {
                logprobs[i] = lp.get(i);
            }
            long h = 0;
            for (int t : prompt) {
                h = h * BASE + t + 1;
            }
            for (int t : gen) {
                h = h * BASE + t + 1;
            }
            this.sequenceHash = h;
        }

        int sequenceLength() {
            return prompt.length + gen.length;
        }

        /** True when this call's prompt + generation is exactly the start of {@code tokens}. */
        boolean prefixes(int[] tokens) {
            if (sequenceLength() > tokens.length) {
                return false;
            }
            for (int i = 0; i < prompt.length; i++) {
                if (prompt[i] != tokens[i]) {
                    return false;
                }
            }
            for (int i = 0; i < gen.length; i++) {
                if (gen[i] != tokens[prompt.length + i]) {
                    return false;
                }
            }
            return true;
        }
    }
}
