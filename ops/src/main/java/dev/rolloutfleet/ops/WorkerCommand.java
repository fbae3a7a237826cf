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

    @Option(names = "--max-inflight", defaultValue = "${env:FLEET_MAX_INFLIGHT:-" + WorkerConfig.DEFAULT_MAX_INFLIGHT + "}",
            description = "Rollouts running at once in this worker (env FLEET_MAX_INFLIGHT; default ${DEFAULT-VALUE}).")
    int maxInflight;

    @Option(names = "--max-inflight-per-partition", defaultValue = "${env:FLEET_MAX_INFLIGHT_PER_PARTITION:-0}",
            description = "Rollouts of one partition running at once; 0 means --max-inflight"
                    + " (env FLEET_MAX_INFLIGHT_PER_PARTITION; default ${DEFAULT-VALUE}).")
    int maxInflightPerPartition;

    @Option(names = "--revoke-grace", defaultValue = "${env:FLEET_REVOKE_GRACE:-PT10S}",
            description = "How long a revoked partition's rollouts may finish before they are cancelled, ISO-8601"
                    + " (env FLEET_REVOKE_GRACE; default ${DEFAULT-VALUE}).")
    Duration revokeGrace;

    @Option(names = "--group-protocol", defaultValue = "${env:FLEET_GROUP_PROTOCOL:-consumer}",
            description = "consumer (KIP-848) or classic (cooperative-sticky) (env FLEET_GROUP_PROTOCOL; default ${DEFAULT-VALUE}).")
    String groupProtocol;

    @Option(names = "--group-instance-id", defaultValue = "${env:FLEET_GROUP_INSTANCE_ID}",
            description = "Static membership id: a restart with the same id keeps its partitions (env FLEET_GROUP_INSTANCE_ID).")
    String groupInstanceId;

    @Option(names = "--exit-with-parent", hidden = true,
            description = "Exit when standard input closes (used by fleet chaos, so a killed parent leaves no worker behind).")
    boolean exitWithParent;

    @Override
    public Integer call() throws Exception {
        if (exitWithParent) {
            Services.exitWhenStdinCloses();
        }
        String id = workerId != null ? workerId : Services.defaultId("worker");
        WorkerConfig.Builder builder = WorkerConfig.builder(kafka.connection(), kafka.topics(), id)
                .groupId(groupId)
                .groupProtocol(groupProtocol)
                .groupInstanceId(groupInstanceId)
                .maxInflight(maxInflight)
                .maxRequestBytes(maxRequestBytes)
                .revokeGrace(revokeGrace);
        if (maxInflightPerPartition > 0) {
            builder.maxInflightPerPartition(maxInflightPerPartition);
        }
        WorkerConfig config = builder.build();
        MetricRegistry registry = new MetricRegistry();
        Worker worker = Worker.start(config, registry);
        MetricsHttpServer server = metrics.start(registry, worker::isReady);
        System.err.println("worker " + id + " consuming " + config.topics().requests() + " from " + config.kafka().bootstrapServers()
                + (server == null ? "" : "; metrics on :" + server.port()));
        return Services.runUntilStopped(worker::awaitTermination, worker::close, server);
    }
}
