package dev.rolloutfleet.collector.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.Json;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DurableLineTest {

    @Test
    void joiningTwoObjectsGivesOneObjectWithTheFieldsOfBoth() throws Exception {
        byte[] joined = DurableLine.join("{\"run_id\":\"r\",\"steps\":[{\"a\":1}]}".getBytes(StandardCharsets.UTF_8),
                "{\"tokens\":[1,2],\"mask_sample\":false}".getBytes(StandardCharsets.UTF_8));

        JsonNode line = Json.mapper().readTree(joined);
        assertThat(line.get("run_id").asText()).isEqualTo("r");
        assertThat(line.at("/steps/0/a").asInt()).isEqualTo(1);
        assertThat(line.get("tokens").toString()).isEqualTo("[1,2]");
        assertThat(line.get("mask_sample").asBoolean()).isFalse();
        assertThat(new String(joined, StandardCharsets.UTF_8)).doesNotContain("\n");
    }
}
