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
 * Guarantee 6 for workers, on real processes: worker JVMs SIGKILLed mid-run lose no request, and
 * only rollouts in flight at a kill run again.
 */
class WorkerKillChaosTest {

    @Test
    void sigkilledWorkersLoseNothingAndOnlyInFlightRolloutsRunAgain() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.out;
        int exit;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            exit = new CommandLine(new FleetCommand()).execute("chaos", "worker-kill", "--rollouts", "300", "--kills", "2",
                    "--work-ms", "600", "--max-inflight", "32", "--partitions", "4");
        } finally {
            System.setOut(original);
        }
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
        JsonNode summary = Json.mapper().readTree(lines.get(lines.size() - 1));
        assertThat(summary.get("lost").asInt()).isZero();
        assertThat(summary.get("durable_run_ids").asInt()).isEqualTo(300);
        assertThat(summary.get("kills").asInt()).isEqualTo(2);
        assertThat(summary.get("reexecuted").asInt()).isLessThanOrEqualTo(summary.get("inflight_at_kills").asInt());
        assertThat(summary.get("inflight_at_kills").asInt()).as("the kills hit rollouts in flight").isPositive();
        assertThat(exit).isZero();
    }
}
