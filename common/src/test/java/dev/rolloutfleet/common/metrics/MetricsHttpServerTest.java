package dev.rolloutfleet.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class MetricsHttpServerTest {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void servesPrometheusTextHealthAndReadiness() throws Exception {
        MetricRegistry registry = new MetricRegistry();
        registry.meter("worker.rollouts.ok").mark(3);
        registry.counter("collector.lines").inc(5);
        registry.gauge("worker.inflight", () -> () -> 7);
        registry.timer("worker.rollout.duration").update(250, TimeUnit.MILLISECONDS);
        AtomicBoolean ready = new AtomicBoolean(false);

        try (MetricsHttpServer server = MetricsHttpServer.start("127.0.0.1", 0, registry, ready::get)) {
            HttpResponse<String> metrics = get(server, "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
            assertThat(metrics.body())
                    .contains("# TYPE worker_rollouts_ok_total counter\nworker_rollouts_ok_total 3\n")
                    .contains("collector_lines_total 5\n")
                    .contains("# TYPE worker_inflight gauge\nworker_inflight 7\n")
                    .contains("# TYPE worker_rollout_duration_seconds summary")
                    .contains("worker_rollout_duration_seconds{quantile=\"0.5\"} 0.25\n")
                    .contains("worker_rollout_duration_seconds_count 1\n");

            assertThat(get(server, "/healthz").statusCode()).isEqualTo(200);
            assertThat(get(server, "/readyz").statusCode()).isEqualTo(503);
            ready.set(true);
            assertThat(get(server, "/readyz").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void namesAreSanitisedForPrometheus() {
        assertThat(PrometheusText.sanitize("worker.rollouts-ok/x")).isEqualTo("worker_rollouts_ok_x");
        assertThat(PrometheusText.sanitize("9lives")).isEqualTo("_lives");
    }

    private HttpResponse<String> get(MetricsHttpServer server, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
