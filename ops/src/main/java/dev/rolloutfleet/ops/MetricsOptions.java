package dev.rolloutfleet.ops;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.common.metrics.MetricsHttpServer;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Option;

/** Where a service serves {@code /metrics}, {@code /healthz} and {@code /readyz}. */
public final class MetricsOptions {

    @Option(names = "--metrics-host", paramLabel = "HOST", defaultValue = "${env:FLEET_METRICS_HOST:-0.0.0.0}",
            description = "Address of the metrics and health endpoint (env FLEET_METRICS_HOST; default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "${env:FLEET_METRICS_PORT:-9400}",
            description = "Port of the metrics and health endpoint; 0 picks a free one; -1 turns it off"
                    + " (env FLEET_METRICS_PORT; default ${DEFAULT-VALUE}).")
    int port;

    MetricsHttpServer start(MetricRegistry registry, BooleanSupplier ready) {
        return start(registry, ready, () -> true);
    }

    MetricsHttpServer start(MetricRegistry registry, BooleanSupplier ready, BooleanSupplier healthy) {
        return port < 0 ? null : MetricsHttpServer.start(host, port, registry, ready, healthy);
    }
}
