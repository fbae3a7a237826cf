package dev.rolloutfleet.common.metrics;

import com.codahale.metrics.MetricRegistry;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Serves one process's metrics and health over HTTP: {@code /metrics} (Prometheus text),
 * {@code /healthz} (200 while the health check passes, else 503) and {@code /readyz} (200 when the readiness check
 * passes, else 503). Requests are handled on virtual threads; the check must be cheap and
 * thread-safe. Port 0 picks a free port; {@link #port()} says which.
 */
public final class MetricsHttpServer implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsHttpServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    public static MetricsHttpServer start(String host, int port, MetricRegistry registry, BooleanSupplier ready) {
        return start(host, port, registry, ready, () -> true);
    }

    /** As above, with {@code /healthz} answering 503 while {@code healthy} is false. */
    public static MetricsHttpServer start(String host, int port, MetricRegistry registry, BooleanSupplier ready,
            BooleanSupplier healthy) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + host + ":" + port
                    + " (is the port taken? pass --metrics-port 0 for any free port)", e);
        }
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(executor);
        server.createContext("/metrics", exchange -> respond(exchange, 200, PrometheusText.CONTENT_TYPE,
                PrometheusText.write(registry)));
        server.createContext("/healthz", exchange -> {
            boolean isHealthy = healthy.getAsBoolean();
            respond(exchange, isHealthy ? 200 : 503, "text/plain", isHealthy ? "ok\n" : "unhealthy\n");
        });
        server.createContext("/readyz", exchange -> {
            boolean isReady = ready.getAsBoolean();
            respond(exchange, isReady ? 200 : 503, "text/plain", isReady ? "ready\n" : "not ready\n");
        });
        server.start();
        return new MetricsHttpServer(server, executor);
    }

    /**
     * Serves {@code GET prefix/NAME} with {@code lookup(NAME)}: a JSON body, or 404 when it is
     * empty. A lookup that throws answers 503 with the message, so a busy service says so.
     */
    public void serveJson(String prefix, Function<String, Optional<String>> lookup) {
        String base = prefix.endsWith("/") ? prefix : prefix + "/";
        server.createContext(base, exchange -> {
            String name = URLDecoder.decode(exchange.getRequestURI().getRawPath().substring(base.length()), StandardCharsets.UTF_8);
            if (name.isEmpty()) {
                respond(exchange, 400, "text/plain", "usage: GET " + base + "NAME\n");
                return;
            }
            try {
                Optional<String> body = lookup.apply(name);
                respond(exchange, body.isPresent() ? 200 : 404, "application/json", body.orElse("{\"error\":\"not found\"}") + "\n");
            } catch (RuntimeException e) {
                respond(exchange, 503, "text/plain", "unavailable: " + e.getMessage() + "\n");
            }
        });
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }
}
