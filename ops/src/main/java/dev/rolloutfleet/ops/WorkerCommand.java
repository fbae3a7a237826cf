package dev.rolloutfleet.ops;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.common.metrics.MetricsHttpServer;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.WorkerConfig;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fleet worker}: runs one rollout worker until stopped. */
@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "Run a rollout worker: consume requests, run rollouts, publish traces and results.")
final class WorkerCommand implements Callable<Integer> {

    @Mixin
    KafkaOptions kafka;

    @Mixin
    MetricsOptions metrics;

    @Option(names = "--group-id", defaultValue = "${env:FLEET_WORKER_GROUP_ID:-" + WorkerConfig.DEFAULT_GROUP_ID + "}",
            description = "Consumer group of the workers (env FLEET_WORKER_GROUP_ID; default ${DEFAULT-VALUE}).")
    String groupId;

    @Option(names = "--worker-id", defaultValue = "${env:FLEET_WORKER_ID}",
            description = "Id of this worker in results and traces (env FLEET_WORKER_ID; default worker-HOST-PID).")
    String workerId;

    @Option(names = "--max-request-bytes", defaultValue = "${env:FLEET_MAX_REQUEST_BYTES:-" + WorkerConfig.DEFAULT_MAX_REQUEST_BYTES + "}",
            description = "Requests larger than this go to the DLQ (env FLEET_MAX_REQUEST_BYTES; default ${DEFAULT-VALUE}).")
    int maxRequestBytes;

    @Override
    public Integer call() throws Exception {
        String id = workerId != null ? workerId : Services.defaultId("worker");
        WorkerConfig config = new WorkerConfig(kafka.connection(), kafka.topics(), groupId, id, maxRequestBytes,
                Duration.ofMillis(200));
        MetricRegistry registry = new MetricRegistry();
        Worker worker = Worker.start(config, registry);
        MetricsHttpServer server = metrics.start(registry, worker::isReady);
        System.err.println("worker " + id + " consuming " + config.topics().requests() + " from " + config.kafka().bootstrapServers()
                + (server == null ? "" : "; metrics on :" + server.port()));
        Services.runUntilStopped(() -> {
            worker.close();
            if (server != null) {
                server.close();
            }
        });
        return 0;
    }
}
