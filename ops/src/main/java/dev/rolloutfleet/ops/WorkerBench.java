package dev.rolloutfleet.ops;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.broker.EmbeddedKafka;
import dev.rolloutfleet.common.kafka.KafkaConnection;
import dev.rolloutfleet.common.topics.TopicLayout;
import dev.rolloutfleet.common.topics.TopicNames;
import dev.rolloutfleet.common.topics.TopicSetup;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.worker.Worker;
import dev.rolloutfleet.worker.WorkerConfig;
import dev.rolloutfleet.worker.env.CorridorEnvironment;
import dev.rolloutfleet.worker.policy.ScriptedPolicy;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet bench worker}: how close one worker comes to its ideal throughput when every
 * rollout is pure waiting ({@code --latency-ms} in the policy, no CPU of its own). The ideal is
 * {@code inflight × 1000 / latency} rollouts per second; efficiency is measured / ideal. A
 * warm-up batch runs first on the same worker (the JIT compiles the hot paths); then the measured
 * batch is published and timed from its first rollout's start to its last result's
 * acknowledgement. Everything (broker, worker, JSON, compression) shares this machine's cores.
 */
@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "Throughput of one worker against its ideal, on an embedded broker.")
final class WorkerBench implements Callable<Integer> {

    @Option(names = "--max-inflight", defaultValue = "1000", description = "Worker in-flight limit (default ${DEFAULT-VALUE}).")
    int maxInflight;

    @Option(names = "--latency-ms", defaultValue = "200", description = "Work per rollout, in ms (default ${DEFAULT-VALUE}).")
    int latencyMs;

    @Option(names = "--rollouts", defaultValue = "10000", description = "Measured rollouts (default ${DEFAULT-VALUE}).")
    int rollouts;

    @Option(names = "--warmup", defaultValue = "5000", description = "Rollouts run before measuring (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--partitions", defaultValue = "12", description = "Request partitions (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--group-protocol", defaultValue = "consumer", description = "consumer or classic (default ${DEFAULT-VALUE}).")
    String groupProtocol;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        try (EmbeddedKafka broker = EmbeddedKafka.start()) {
            KafkaConnection kafka = KafkaConnection.of(broker.bootstrapServers());
            TopicNames topics = TopicNames.defaults();
            try (Admin admin = kafka.admin()) {
                new TopicSetup(admin).ensure(TopicLayout.of(topics, partitions, (short) 1));
            }
            MetricRegistry registry = new MetricRegistry();
            Meter started = registry.meter("worker.rollouts.started");
            Meter ok = registry.meter("worker.rollouts.ok");
            double seconds;
            double workerCpuMs;
            double brokerCpuMs;
            try (KafkaProducer<String, byte[]> producer = kafka.producer("bench-submit");
                    Worker ignored = Worker.start(WorkerConfig.builder(kafka, topics, "bench-worker")
                            .maxInflight(maxInflight).groupProtocol(groupProtocol).build(), registry)) {
                if (warmup > 0) {
                    log.printf(Locale.ROOT, "warm-up: %d rollouts%n", warmup);
                    submit(producer, topics, "warmup", warmup);
                    awaitDone(ok, warmup, log);
                }
                submit(producer, topics, "bench", rollouts);
                log.printf(Locale.ROOT, "measuring %d rollouts with --max-inflight %d, %d ms each%n", rollouts, maxInflight, latencyMs);
                while (started.getCount() == warmup) {
                    Thread.sleep(1);
                }
                long first = System.nanoTime();
                long workerCpuBefore = processCpu();
                long brokerCpuBefore = brokerCpu(broker);
                awaitDone(ok, warmup + rollouts, log);
                seconds = (System.nanoTime() - first) / 1e9;
                workerCpuMs = (processCpu() - workerCpuBefore) / 1e6 / rollouts;
                brokerCpuMs = (brokerCpu(broker) - brokerCpuBefore) / 1e6 / rollouts;
            }
            Snapshot duration = registry.timer("worker.rollout.duration").getSnapshot();
            log.printf(Locale.ROOT, "rollout duration (inside the runner): mean %.1f ms, p50 %.1f ms, p99 %.1f ms%n",
                    duration.getMean() / 1e6, duration.getMedian() / 1e6, duration.get99thPercentile() / 1e6);
            double perSecond = rollouts / seconds;
            double ideal = maxInflight * 1000.0 / latencyMs;
            ObjectNode summary = Json.object().put("inflight", maxInflight).put("latency_ms", latencyMs)
                    .put("rollouts", rollouts).put("warmup", warmup).put("seconds", round(seconds))
                    .put("rollouts_per_s", round(perSecond)).put("ideal_per_s", round(ideal))
                    .put("efficiency", Math.round(perSecond / ideal * 1000) / 1000.0)
                    .put("cores", Runtime.getRuntime().availableProcessors())
                    .put("worker_cpu_ms_per_rollout", Math.round(workerCpuMs * 1000) / 1000.0)
                    .put("broker_cpu_ms_per_rollout", Math.round(brokerCpuMs * 1000) / 1000.0);
            out.println(Json.encodeToString(summary));
            return 0;
        }
    }

    private void submit(KafkaProducer<String, byte[]> producer, TopicNames topics, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            RolloutRequest request = request(prefix + "-" + i);
            producer.send(new ProducerRecord<>(topics.requests(), request.kafkaKey(), Json.encode(request)));
        }
        producer.flush();
    }

    private static void awaitDone(Meter ok, long target, PrintStream log) throws InterruptedException {
        long nextReport = System.nanoTime();
        while (ok.getCount() < target) {
            Thread.sleep(1);
            if (System.nanoTime() >= nextReport) {
                log.printf(Locale.ROOT, "  %d/%d done%n", ok.getCount(), target);
                nextReport += 1_000_000_000L;
            }
        }
    }

    private RolloutRequest request(String runId) {
        ObjectNode envConfig = Json.object();
        envConfig.putObject("env_params").put("max_steps_per_episode", 1);
        return new RolloutRequest(SchemaVersion.CURRENT, runId, null,
                new RolloutRequest.EnvSpec(CorridorEnvironment.NAME, 7L, envConfig),
                new RolloutRequest.PolicySpec(ScriptedPolicy.NAME, Json.object().put("latency_ms", latencyMs)),
                null, null, null, null, null, null, null, null, null);
    }

    /** CPU time of this JVM (worker, clients, bench loop), in ns. */
    static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static long brokerCpu(EmbeddedKafka broker) {
        return ProcessHandle.of(broker.pid()).flatMap(h -> h.info().totalCpuDuration()).map(java.time.Duration::toNanos)
                .orElse(0L);
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
