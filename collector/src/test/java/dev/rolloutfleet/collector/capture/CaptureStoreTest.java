package dev.rolloutfleet.collector.capture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rolloutfleet.collector.capture.AttemptState.Status;
import dev.rolloutfleet.collector.capture.CaptureStore.Effect;
import dev.rolloutfleet.collector.capture.CaptureStore.Emission;
import dev.rolloutfleet.collector.capture.CaptureStore.Outcome;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.FreezeCommand;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RetireCommand;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The capture state machine on a real RocksDB. {@link Log} stands for the partition: records are
 * applied in offset order, and whatever the store emits is appended to the log and applied in
 * turn, as the collector does with the real topic.
 */
class CaptureStoreTest {

    @TempDir
    Path dir;

    private CaptureStore store;
    private Log log;

    @BeforeEach
    void open() {
        store = CaptureStore.open(dir.resolve("p0"));
        log = new Log();
    }

    @AfterEach
    void close() {
        store.close();
    }

    /** The partition as an in-memory list of records, fed to the store in order. */
    final class Log {
        final List<String> keys = new ArrayList<>();
        final List<byte[]> values = new ArrayList<>();
        final List<Effect> effects = new ArrayList<>();

        /** Appends a record and applies it, then everything it makes the store emit. */
        Effect write(String key, byte[] value) {
            List<Emission> queue = new ArrayList<>(List.of(new Emission(key, value)));
            Effect first = null;
            while (!queue.isEmpty()) {
                Emission next = queue.remove(0);
                keys.add(next.key());
                values.add(next.value());
                Outcome outcome = store.apply(next.key(), next.value(), keys.size() - 1);
                effects.add(outcome.effect());
                first = first == null ? outcome.effect() : first;
                queue.addAll(outcome.emissions());
            }
            return first;
        }

        /** Appends a record and applies it, but does not feed back what it emits. */
        Outcome writeOnly(String key, byte[] value) {
            keys.add(key);
            values.add(value);
            return store.apply(key, value, keys.size() - 1);
        }
    }

    static byte[] entry(String attempt, String callId, int token) {
        return Json.encode(new CaptureEntry(1, "r", attempt, callId, "main", "m", List.of(1, 2), List.of(token),
                List.of(-0.5), null, System.nanoTime(), null));
    }

    static byte[] freeze(String attempt, String snapshot) {
        return Json.encode(new FreezeCommand(1, "r", attempt, snapshot, "test", 0, null));
    }

    static byte[] retire(String attempt, String snapshot, long version, long ts) {
        return Json.encode(new RetireCommand(1, "r", attempt, snapshot, version, ts, null));
    }

    private void twoEntriesFrozen(String attempt) {
        log.write("r/" + attempt + "/c1", entry(attempt, "c1", 3));
        log.write("r/" + attempt + "/c2", entry(attempt, "c2", 4));
        assertThat(log.write("r/" + attempt + "/!freeze", freeze(attempt, "s1"))).isEqualTo(Effect.FROZEN);
    }

    @Test
    void anEntrysContentHashIgnoresCreatedAtAndSpacingButNotWhatTheEntrySays() {
        String entry = "{\"run_id\":\"r\",\"call_id\":\"c1\",\"prompt_token_ids\":[1,2,3],\"created_at\":1,"
                + "\"output\":{\"created_at\":5,\"content\":\"hi\"}}";
        long hash = CaptureStore.contentHash(entry.getBytes(java.nio.charset.StandardCharsets.UTF_8));

        assertThat(CaptureStore.contentHash(entry.replace("\"created_at\":1,", "\"created_at\":999, ").replace(",", ", ")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8))).isEqualTo(hash);
        assertThat(CaptureStore.contentHash(entry.replace("[1,2,3]", "[1,2,4]").getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isNotEqualTo(hash);
        assertThat(CaptureStore.contentHash(entry.replace("\"created_at\":5", "\"created_at\":6").getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .as("only the entry's own created_at is diagnostic").isNotEqualTo(hash);
    }

    @Test
    void versionGrowsByOneForEachEntryMarkAndFreeze() {
        twoEntriesFrozen("a1");
        AttemptState state = store.state("r", "a1");
        assertThat(state.status()).isEqualTo(Status.FROZEN);
        assertThat(state.version()).isEqualTo(3);
        assertThat(state.snapshotId()).isEqualTo("s1");
        assertThat(store.entries("r", "a1")).extracting(CaptureEntry::callId).containsExactly("c1", "c2");
    }

    @Test
    void aMatchingRetireDeletesTheEntriesAndLeavesARetiredMarker() {
        twoEntriesFrozen("a1");
        assertThat(log.write("r/a1/!retire", retire("a1", "s1", 3, 1000))).isEqualTo(Effect.RETIRE_MATCHED);
        assertThat(log.keys).contains("r/a1/!retired", "r/a1/c1", "r/a1/c2");
        assertThat(log.effects).contains(Effect.RETIRED);
        assertThat(store.state("r", "a1").status()).isEqualTo(Status.RETIRED);
        assertThat(store.entries("r", "a1")).isEmpty();
        // The tombstones came back from the topic: nothing is owed any more.
        assertThat(store.owed()).isEmpty();
    }

    @Test
    void aStaleRetireIsANoOp() {
        twoEntriesFrozen("a1");
        assertThat(log.write("r/a1/!retire", retire("a1", "s1", 2, 1000))).isEqualTo(Effect.RETIRE_STALE);
        assertThat(log.write("r/a1/!retire", retire("a1", "other", 3, 1000))).isEqualTo(Effect.RETIRE_STALE);
        assertThat(store.state("r", "a1").status()).isEqualTo(Status.FROZEN);
        assertThat(store.entries("r", "a1")).hasSize(2);
    }

    @Test
    void aRetireNeverTouchesAnotherAttempt() {
        twoEntriesFrozen("a1");
        twoEntriesFrozen("a2");
        log.write("r/a1/!retire", retire("a1", "s1", 3, 1000));
        assertThat(store.state("r", "a1").status()).isEqualTo(Status.RETIRED);
        assertThat(store.state("r", "a2").status()).isEqualTo(Status.FROZEN);
        assertThat(store.entries("r", "a2")).hasSize(2);
    }

    @Test
    void aLateWriterIsRefusedAfterRetirementAndItsEntryTombstoned() {
        twoEntriesFrozen("a1");
        log.write("r/a1/!retire", retire("a1", "s1", 3, 1000));
        assertThat(log.write("r/a1/c9", entry("a1", "c9", 9))).isEqualTo(Effect.LATE_WRITE_REFUSED);
        assertThat(log.keys.get(log.keys.size() - 1)).isEqualTo("r/a1/c9");
        assertThat(log.values.get(log.values.size() - 1)).as("a tombstone followed").isNull();
        assertThat(store.state("r", "a1").status()).isEqualTo(Status.RETIRED);
        assertThat(store.entries("r", "a1")).isEmpty();
    }

    @Test
    void anEntryAfterTheFreezeMarksTheAttemptIncompleteAndTheEarlierRetireThenFails() {
        twoEntriesFrozen("a1");
        assertThat(log.write("r/a1/c3", entry("a1", "c3", 5))).isEqualTo(Effect.INCOMPLETE_DETECTED);
        AttemptState state = store.state("r", "a1");
        assertThat(state.marks()).containsKey("late:c3");
        assertThat(state.version()).isEqualTo(4);
        assertThat(store.entries("r", "a1")).as("the late entry is not in the snapshot").hasSize(2);
        assertThat(log.write("r/a1/!retire", retire("a1", "s1", 3, 1000))).isEqualTo(Effect.RETIRE_STALE);
        assertThat(store.state("r", "a1").status()).isEqualTo(Status.FROZEN);
    }

    @Test
    void aDuplicateEntryIsANoOpAndAConflictingOneMarksTheAttemptIncomplete() {
        byte[] first = entry("a1", "c1", 3);
        log.write("r/a1/c1", first);
        assertThat(log.write("r/a1/c1", entry("a1", "c1", 3))).as("same content, new created_at").isEqualTo(Effect.DUPLICATE);
        assertThat(store.state("r", "a1").version()).isEqualTo(1);
        assertThat(log.write("r/a1/c1", entry("a1", "c1", 7))).isEqualTo(Effect.INCOMPLETE_DETECTED);
        assertThat(store.state("r", "a1").marks()).containsKey("conflict:c1");
    }

    @Test
    void theSweepRemovesOnlyMarkersOlderThanTheTtl() {
        twoEntriesFrozen("old");
        twoEntriesFrozen("new");
        log.write("r/old/!retire", retire("old", "s1", 3, 1_000));
        log.write("r/new/!retire", retire("new", "s1", 3, 9_000));
        List<Emission> sweep = store.sweep(10_000, Duration.ofMillis(5_000));
        assertThat(sweep).extracting(Emission::key).allMatch(k -> k.startsWith("r/old/"));
        assertThat(sweep).allMatch(e -> e.value() == null);
        sweep.forEach(e -> log.write(e.key(), e.value()));
        assertThat(store.state("r", "old")).isNull();
        assertThat(store.state("r", "new").status()).isEqualTo(Status.RETIRED);
    }

    @Test
    void restoringFromTheTopicRebuildsIdenticalState() {
        twoEntriesFrozen("a1");
        log.write("r/a1/!retire", retire("a1", "s1", 3, 1000));
        twoEntriesFrozen("a2");
        log.write("r/a2/c3", entry("a2", "c3", 5));
        log.write("r/a3/c1", entry("a3", "c1", 1));
        log.write("r/a3/c1", entry("a3", "c1", 2));
        log.write("r/a1/c9", entry("a1", "c9", 9));

        try (CaptureStore restored = CaptureStore.open(dir.resolve("restored"))) {
            int half = log.keys.size() / 2;
            for (int i = 0; i < half; i++) {
                restored.apply(log.keys.get(i), log.values.get(i), i);
            }
            assertThat(restored.nextOffset()).isEqualTo(half);
        }
        try (CaptureStore restored = CaptureStore.open(dir.resolve("restored"))) {
            for (long i = restored.nextOffset(); i < log.keys.size(); i++) {
                restored.apply(log.keys.get((int) i), log.values.get((int) i), i);
            }
            for (String attempt : List.of("a1", "a2", "a3")) {
                assertThat(restored.state("r", attempt)).as(attempt).isEqualTo(store.state("r", attempt));
                assertThat(restored.entries("r", attempt)).isEqualTo(store.entries("r", attempt));
            }
            assertThat(restored.owed()).isEmpty();
        }
    }

    @Test
    void whatARestoreMissedPublishingIsOwedAfterwards() {
        twoEntriesFrozen("a1");
        // The retire matched, but the collector died before its marker reached the topic.
        Outcome matched = log.writeOnly("r/a1/!retire", retire("a1", "s1", 3, 1000));
        assertThat(matched.effect()).isEqualTo(Effect.RETIRE_MATCHED);
        assertThat(store.owed()).extracting(Emission::key).containsExactly("r/a1/!retired");
    }
}
