package dev.rolloutfleet.common.topics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the topics of a {@link TopicLayout} that are missing and verifies the invariants of the
 * ones that exist. Idempotent: running it against a ready cluster changes nothing. Several
 * processes may run it at once; a topic created by another is not an error.
 */
public final class TopicSetup {

    private static final Logger log = LoggerFactory.getLogger(TopicSetup.class);
    private static final long TIMEOUT_S = 60;

    private final Admin admin;

    public TopicSetup(Admin admin) {
        this.admin = admin;
    }

    /**
     * Ensures every topic of the layout exists, then verifies co-partitioning.
     *
     * @return the names of the topics this call created
     * @throws TopicMismatchException when results and token-capture differ in partition count
     */
    public List<String> ensure(TopicLayout layout) {
        Map<String, NewTopic> wanted = layout.newTopics();
        List<String> created = new ArrayList<>();
        try {
            var existing = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
            for (NewTopic topic : wanted.values()) {
                if (existing.contains(topic.name())) {
                    continue;
                }
                try {
                    admin.createTopics(List.of(topic)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                    created.add(topic.name());
                    log.info("created topic {} ({} partitions)", topic.name(), topic.numPartitions());
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
            awaitVisible(wanted.keySet());
            verify(layout);
            return created;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while setting up topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot set up topics: " + rootMessage(e), e);
        }
    }

    /**
     * Verifies that results and token-capture have the same partition count.
     *
     * @throws TopicMismatchException naming both counts and what to do
     */
    public void verify(TopicLayout layout) throws ExecutionException, InterruptedException, TimeoutException {
        TopicNames names = layout.names();
        Map<String, TopicDescription> described = describe(List.of(names.results(), names.tokenCapture()));
        int results = described.get(names.results()).partitions().size();
        int capture = described.get(names.tokenCapture()).partitions().size();
        if (results != capture) {
            throw new TopicMismatchException(names.results() + " has " + results + " partitions but "
                    + names.tokenCapture() + " has " + capture + "; they must be equal so a run's result and"
                    + " its capture entries land on the same-numbered partition. Add partitions to the smaller"
                    + " one (kafka-topics --alter --partitions " + Math.max(results, capture) + ") before any"
                    + " capture entries are written, or recreate both.");
        }
    }

    /** Waits until the cluster lists every topic: a topic just created may not be in the metadata yet. */
    private void awaitVisible(java.util.Set<String> names) throws ExecutionException, InterruptedException, TimeoutException {
        for (int attempt = 1; !admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS).containsAll(names); attempt++) {
            if (attempt >= 100) {
                throw new TimeoutException("topics " + names + " were created but not all are listed after 10 s");
            }
            Thread.sleep(100);
        }
    }

    /** Describes topics, waiting out the moment after creation when the broker does not know them yet. */
    private Map<String, TopicDescription> describe(List<String> topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        for (int attempt = 1; ; attempt++) {
            try {
                return admin.describeTopics(topics).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || attempt >= 50) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
