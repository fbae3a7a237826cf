package dev.rolloutfleet.common.testing;

import dev.rolloutfleet.common.broker.EmbeddedKafka;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

/**
 * Gives a test a real Kafka broker as a {@link KafkaCluster} parameter, chosen in this order:
 * {@code KAFKA_BOOTSTRAP_SERVERS} when set; Testcontainers' Kafka when Docker answers; else one
 * {@link EmbeddedKafka} shared by the whole test JVM. There is no mock of Kafka: the broker is
 * started once per JVM and stopped when the JVM's test run ends.
 */
public final class RealKafka implements ParameterResolver {

    private static final Logger log = LoggerFactory.getLogger(RealKafka.class);
    private static final String DOCKER_IMAGE = "apache/kafka:4.1.1";

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == KafkaCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(RealKafka.class, key -> start(), Started.class)
                .cluster();
    }

    private static Started start() {
        String external = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        if (external != null && !external.isBlank()) {
            log.info("tests use the external Kafka at {}", external);
            return new Started(new KafkaCluster(external, "external"), () -> {});
        }
        if (dockerAnswers()) {
            KafkaContainer container = new KafkaContainer(DOCKER_IMAGE);
            container.start();
            log.info("tests use Testcontainers Kafka at {}", container.getBootstrapServers());
            return new Started(new KafkaCluster(container.getBootstrapServers(), "testcontainers"), container::stop);
        }
        EmbeddedKafka embedded = EmbeddedKafka.start();
        log.info("tests use the embedded Kafka at {}", embedded.bootstrapServers());
        return new Started(new KafkaCluster(embedded.bootstrapServers(), "embedded"), embedded::close);
    }

    private static boolean dockerAnswers() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** The started broker, closed by JUnit when the root context closes. */
    private record Started(KafkaCluster cluster, Runnable stop) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            stop.run();
        }
    }
}
