package dev.rolloutfleet.ops;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.common.metrics.MetricsHttpServer;
import dev.rolloutfleet.worker.sim.SimLlmServer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fleet sim-llm}: the simulated OpenAI-compatible inference server, standalone. */
@Command(name = "sim-llm", mixinStandardHelpOptions = true,
        description = "Serve a simulated OpenAI-compatible (vLLM-shaped) inference server: deterministic tool calls, token ids, log-probs.")
final class SimLlmCommand implements Callable<Integer> {

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8000", description = "Port; 0 picks a free one (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--model", defaultValue = "sim-1", description = "Model name it answers as (default ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--first-token-ms", defaultValue = "0", description = "Time to first token (default ${DEFAULT-VALUE}).")
    long firstTokenMs;

    @Option(names = "--per-token-ms", defaultValue = "0", description = "Time per generated token (default ${DEFAULT-VALUE}).")
    double perTokenMs;

    @Option(names = "--slots", defaultValue = "256", description = "Requests served at once (default ${DEFAULT-VALUE}).")
    int slots;

    @Option(names = "--error-rate", defaultValue = "0", description = "Fraction answered HTTP 500 (default ${DEFAULT-VALUE}).")
    double errorRate;

    @Option(names = "--rate-limit-rate", defaultValue = "0", description = "Fraction answered HTTP 429 (default ${DEFAULT-VALUE}).")
    double rateLimitRate;

    @Option(names = "--drift-rate", defaultValue = "0",
            description = "Fraction whose history is re-rendered so the prompt no longer extends the last turn (default ${DEFAULT-VALUE}).")
    double driftRate;

    @Option(names = "--empty-rate", defaultValue = "0", description = "Fraction with an empty generation (default ${DEFAULT-VALUE}).")
    double emptyRate;

    // Off unless asked for: on a laptop the sim server runs beside a worker, which has 9400.
    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "${env:FLEET_METRICS_PORT:--1}",
            description = "Serve /metrics on this port; 0 picks a free one; -1 (default) serves none (env FLEET_METRICS_PORT).")
    int metricsPort;

    @Override
    public Integer call() throws Exception {
        SimLlmServer server = SimLlmServer.start(host, port, model, new SimLlmServer.Latency(firstTokenMs, perTokenMs, slots),
                new SimLlmServer.Faults(errorRate, rateLimitRate, driftRate, emptyRate));
        MetricRegistry registry = new MetricRegistry();
        registry.registerGauge("sim.requests", server::requestCount);
        MetricsHttpServer metricsServer = metricsPort < 0 ? null
                : MetricsHttpServer.start(host, metricsPort, registry, () -> true);
        System.out.println("simulated inference server at " + server.baseUrl() + " (model " + model + ")"
                + (metricsServer == null ? "" : "; metrics on :" + metricsServer.port()) + "; Ctrl-C stops it");
        return Services.runUntilStopped(() -> Thread.currentThread().join(), server::close, metricsServer);
    }
}
