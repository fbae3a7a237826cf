package dev.rolloutfleet.common.wire;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;

/** Holder for unknown fields: Jackson's any-setter fills the map after construction, so it must be mutable. */
final class Extras {

    private Extras() {}

    static Map<String, JsonNode> mutable(Map<String, JsonNode> extra) {
        return extra == null ? new LinkedHashMap<>() : new LinkedHashMap<>(extra);
    }
}
