package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Guarantees 1, 2, 5 and 6 for collectors, on real processes: collector JVMs SIGKILLed while
 * results and capture evidence stream in lose no record, write none twice, retire no evidence
 * before its line is on disk, retire every clean build and keep every masked one's evidence.
 */
class CollectorKillChaosTest {

    @Test
    void sigkilledCollectorsLoseAndDuplicateNothingAndRetireOnlyDurableCleanEvidence() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.out;
        int exit;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            exit = new CommandLine(new FleetCommand()).execute("chaos", "collector-kill", "--rollouts", "300", "--kills", "2",
                    "--rate", "150", "--partitions", "4", "--seed", "2");
        } finally {
            System.setOut(original);
        }
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
        JsonNode summary = Json.mapper().readTree(lines.get(lines.size() - 1));
        assertThat(summary.get("lost").asInt()).isZero();
        assertThat(summary.get("duplicate_lines").asInt()).isZero();
        assertThat(summary.get("premature_retires").asInt()).isZero();
        assertThat(summary.get("durable_run_ids").asInt()).isEqualTo(300);
        assertThat(summary.get("retired").asInt()).isEqualTo(summary.get("clean").asInt()).isPositive();
        assertThat(summary.get("masked_retained").asInt()).isEqualTo(summary.get("masked").asInt()).isPositive();
        assertThat(exit).isZero();
    }
}
