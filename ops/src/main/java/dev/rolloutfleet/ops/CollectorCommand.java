package dev.rolloutfleet.ops;

import com.codahale.metrics.MetricRegistry;
import dev.rolloutfleet.collector.Collector;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.CollectorListener;
import dev.rolloutfleet.common.metrics.MetricsHttpServer;
import dev.rolloutfleet.common.wire.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fleet collector}: runs one results collector until stopped. */
@Command(name = "collector", mixinStandardHelpOptions = true,
        description = "Run a results collector: write results as fsynced JSON lines, then commit and announce them.")
final class CollectorCommand implements Callable<Integer> {

    @Mixin
    KafkaOptions kafka;

    @Mixin
    MetricsOptions metrics;

    @Option(names = "--data-dir", defaultValue = "${env:FLEET_DATA_DIR:-./fleet-data}",
            description = "Directory of the durable segment files (env FLEET_DATA_DIR; default ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--group-id", defaultValue = "${env:FLEET_COLLECTOR_GROUP_ID:-" + CollectorConfig.DEFAULT_GROUP_ID + "}",
            description = "Consumer group of the collectors (env FLEET_COLLECTOR_GROUP_ID; default ${DEFAULT-VALUE}).")
    String groupId;

    @Option(names = "--collector-id", defaultValue = "${env:FLEET_COLLECTOR_ID}",
            description = "Id of this collector (env FLEET_COLLECTOR_ID; default collector-HOST-PID).")
    String collectorId;

    @Option(names = "--max-segment-bytes", defaultValue = "${env:FLEET_MAX_SEGMENT_BYTES:-" + CollectorConfig.DEFAULT_MAX_SEGMENT_BYTES + "}",
            description = "Roll a segment file over past this size (env FLEET_MAX_SEGMENT_BYTES; default ${DEFAULT-VALUE}).")
    long maxSegmentBytes;

    @Option(names = "--capture-wait", defaultValue = "${env:FLEET_CAPTURE_WAIT:-PT30S}",
            description = "How long a result waits for its capture evidence before its build is masked capture_lagging,"
                    + " ISO-8601 (env FLEET_CAPTURE_WAIT; default ${DEFAULT-VALUE}).")
    Duration captureWait;

    @Option(names = "--retired-ttl", defaultValue = "${env:FLEET_RETIRED_TTL:-P7D}",
            description = "How long retired markers refuse late writes before they are swept, ISO-8601"
                    + " (env FLEET_RETIRED_TTL; default ${DEFAULT-VALUE}).")
    Duration retiredTtl;

    @Option(names = "--group-instance-id", defaultValue = "${env:FLEET_GROUP_INSTANCE_ID}",
            description = "Static membership id; give each collector (and its data directory) a stable one, so a"
                    + " restarted collector gets its partitions back (env FLEET_GROUP_INSTANCE_ID).")
    String groupInstanceId;

    @Option(names = "--max-mask-fraction", defaultValue = "${env:FLEET_MAX_MASK_FRACTION:-0.5}",
            description = "Report unhealthy once more than this fraction of participating samples is masked"
                    + " (env FLEET_MAX_MASK_FRACTION; default ${DEFAULT-VALUE}).")
    double maxMaskFraction;

    @Option(names = "--mask-min-samples", defaultValue = "${env:FLEET_MASK_MIN_SAMPLES:-100}",
            description = "Samples needed before the mask fraction is judged (env FLEET_MASK_MIN_SAMPLES; default ${DEFAULT-VALUE}).")
    int maskMinSamples;

    @Option(names = "--stop-on-mask-limit", defaultValue = "${env:FLEET_STOP_ON_MASK_LIMIT:-false}",
            description = "Also stop consuming results past the mask limit (env FLEET_STOP_ON_MASK_LIMIT; default ${DEFAULT-VALUE}).")
    boolean stopOnMaskLimit;

    @Option(names = "--group-commit-bytes", defaultValue = "${env:FLEET_GROUP_COMMIT_BYTES:-4194304}",
            description = "Write and fsync gathered results once they hold this many bytes"
                    + " (env FLEET_GROUP_COMMIT_BYTES; default ${DEFAULT-VALUE}).")
    long groupCommitBytes;

    @Option(names = "--group-commit-delay", defaultValue = "${env:FLEET_GROUP_COMMIT_DELAY:-PT0.02S}",
            description = "... or once the oldest has waited this long, ISO-8601 (env FLEET_GROUP_COMMIT_DELAY; default ${DEFAULT-VALUE}).")
    Duration groupCommitDelay;

    @Option(names = "--exit-with-parent", hidden = true,
            description = "Exit when standard input closes (used by fleet chaos).")
    boolean exitWithParent;

    /** {@code GET /admin/capture/RUN_ID}: the capture state of each attempt, 404 when another collector owns the run. */
    static final String CAPTURE_STATE_PATH = "/admin/capture/";

    static void serveAdmin(MetricsHttpServer server, Collector collector) {
        server.serveJson(CAPTURE_STATE_PATH, runId -> collector.captureState(runId).map(Json::encodeToString));
    }

    @Override
    public Integer call() throws Exception {
        if (exitWithParent) {
            Services.exitWhenStdinCloses();
        }
        String id = collectorId != null ? collectorId : Services.defaultId("collector");
        CollectorConfig config = new CollectorConfig(kafka.connection(), kafka.topics(), groupId, id, dataDir,
                maxSegmentBytes, Duration.ofMillis(200), captureWait, retiredTtl, groupInstanceId,
                new CollectorConfig.MaskLimit(maxMaskFraction, maskMinSamples, stopOnMaskLimit),
                new CollectorConfig.GroupCommit(groupCommitBytes, groupCommitDelay));
        MetricRegistry registry = new MetricRegistry();
        Collector collector = Collector.start(config, registry, CollectorListener.NONE);
        MetricsHttpServer server = metrics.start(registry, collector::isReady, collector::isHealthy);
        if (server != null) {
            serveAdmin(server, collector);
        }
        System.err.println("collector " + id + " writing " + config.topics().results() + " to " + dataDir.toAbsolutePath()
                + (server == null ? "" : "; metrics on :" + server.port()));
        return Services.runUntilStopped(collector::awaitTermination, collector::close, server);
    }
}
