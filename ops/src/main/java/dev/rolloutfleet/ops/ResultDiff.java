package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutResult;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Compares what two runs of the same request did: status, error code, ops executed, metrics and
 * every trajectory step (observation, tool calls, reward, done, info). When and where they ran is
 * left out: timing blocks, every {@code *_ms} field, retry counts, worker and capture bookkeeping.
 * Deterministic environments and policies must give no difference.
 */
final class ResultDiff {

    /** Enough to see what went wrong; the rest of a diverged trajectory differs as a consequence. */
    static final int MAX_DIFFERENCES = 8;

    private ResultDiff() {}

    /** The parts of a result that a replay must reproduce, with run-specific fields removed. */
    static JsonNode comparable(RolloutResult result) {
        ObjectNode node = Json.object();
        node.put("status", result.status() == null ? null : result.status().name());
        node.put("error_code", result.error() == null ? null : result.error().code());
        node.put("ops_executed", result.opsExecuted());
        node.set("metrics", Json.tree(result.metrics()));
        node.set("trajectories", Json.tree(result.trajectories()));
        return stripVolatile(node);
    }

    /** Human-readable differences ({@code path: original != replay}), at most {@link #MAX_DIFFERENCES}. */
    static List<String> differences(RolloutResult original, RolloutResult replay) {
        List<String> out = new ArrayList<>();
        compare("", comparable(original), comparable(replay), out);
        return out;
    }

    private static void compare(String path, JsonNode a, JsonNode b, List<String> out) {
        if (out.size() >= MAX_DIFFERENCES || a.equals(b)) {
            return;
        }
        if (a.isObject() && b.isObject()) {
            TreeSet<String> names = new TreeSet<>();
            a.fieldNames().forEachRemaining(names::add);
            b.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                compare(path + "/" + name, a.path(name), b.path(name), out);
            }
        } else if (a.isArray() && b.isArray()) {
            int common = Math.min(a.size(), b.size());
            for (int i = 0; i < common; i++) {
                compare(path + "/" + i, a.get(i), b.get(i), out);
            }
            if (a.size() != b.size() && out.size() < MAX_DIFFERENCES) {
                out.add(path + ": " + a.size() + " items != " + b.size() + " items");
            }
        } else if (a.isNumber() && b.isNumber() && a.asDouble() == b.asDouble()) {
            // 1 and 1.0 are the same reward.
        } else {
            out.add(path + ": " + brief(a) + " != " + brief(b));
        }
    }

    private static String brief(JsonNode node) {
        String text = node.isMissingNode() ? "(absent)" : node.toString();
        return text.length() > 120 ? text.substring(0, 117) + "..." : text;
    }

    private static JsonNode stripVolatile(JsonNode node) {
        if (node.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (isVolatile(field.getKey())) {
                    fields.remove();
                } else {
                    stripVolatile(field.getValue());
                }
            }
        } else if (node.isArray()) {
            node.forEach(ResultDiff::stripVolatile);
        }
        return node;
    }

    private static boolean isVolatile(String name) {
        return name.equals("timing") || name.endsWith("_ms") || name.equals("retries");
    }
}
