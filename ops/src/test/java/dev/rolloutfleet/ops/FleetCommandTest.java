package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class FleetCommandTest {

    @TempDir
    Path dataDir;

    @Test
    void helpListsEveryCommand() {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new FleetCommand());
        cli.setOut(new PrintWriter(out));
        assertThat(cli.execute("--help")).isZero();
        assertThat(out.toString()).contains("demo", "worker", "collector", "broker");
    }

    @Test
    void demoMakesEveryRolloutDurableAndEndsWithAJsonSummary() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.out;
        int exit;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            exit = new CommandLine(new FleetCommand()).execute("demo", "--rollouts", "12", "--data-dir", dataDir.toString());
        } finally {
            System.setOut(original);
        }
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(exit).isZero();
        JsonNode summary = Json.mapper().readTree(lines.get(lines.size() - 1));
        assertThat(summary.get("submitted").asInt()).isEqualTo(12);
        assertThat(summary.get("durable").asInt()).isEqualTo(12);
        assertThat(summary.get("failed").asInt()).isZero();
        assertThat(summary.get("data_dir").asText()).isEqualTo(dataDir.toAbsolutePath().normalize().toString());

        Set<String> runIds = new HashSet<>();
        int count = 0;
        try (Stream<Path> files = Files.list(dataDir)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".jsonl")).toList()) {
                for (String line : Files.readAllLines(file)) {
                    runIds.add(Json.mapper().readTree(line).get("run_id").asText());
                    count++;
                }
            }
        }
        assertThat(count).isEqualTo(12);
        assertThat(runIds).hasSize(12);
    }
}
