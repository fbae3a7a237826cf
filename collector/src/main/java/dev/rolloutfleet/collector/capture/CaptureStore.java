package dev.rolloutfleet.collector.capture;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.rolloutfleet.collector.capture.AttemptState.RetireMatch;
import dev.rolloutfleet.collector.capture.AttemptState.Status;
import dev.rolloutfleet.common.wire.CaptureEntry;
import dev.rolloutfleet.common.wire.FreezeCommand;
import dev.rolloutfleet.common.wire.IncompleteMark;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RetireCommand;
import dev.rolloutfleet.common.wire.SchemaVersion;
import dev.rolloutfleet.common.wire.WireFormatException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The materialized state of one token-capture partition in RocksDB: per {@code (run_id,
 * attempt)} an {@link AttemptState} and the accepted entries. The state is a pure function of the
 * topic: {@link #apply} takes the partition's records in offset order, and each record's effect
 * and the partition checkpoint are written in one atomic batch, so a restore from the checkpoint
 * (or from the beginning) reaches the same state. Detections that must survive a restore
 * (incomplete marks, a matched retire, tombstones of retired evidence) are returned as
 * {@link Emission}s for the caller to publish, and remembered until they come back. Confined to one
 * thread.
 */
public final class CaptureStore implements AutoCloseable {

    static {
        RocksDB.loadLibrary();
    }

    private static final byte[] CHECKPOINT = "meta|checkpoint".getBytes(StandardCharsets.UTF_8);
    private static final String STATE = "a|";
    private static final String ENTRY = "e|";

    /** A record the caller must publish to the capture topic; a null value is a tombstone. */
    public record Emission(String key, byte[] value) {}

    /** What applying one record did. */
    public enum Effect {
        ENTRY_APPLIED, DUPLICATE, LATE_WRITE_REFUSED, INCOMPLETE_DETECTED, MARK_APPLIED, FROZEN,
        RETIRE_MATCHED, RETIRE_STALE, RETIRED, SWEPT, IGNORED
    }

    /** The effect of one record and what it obliges the caller to publish. */
    public record Outcome(Effect effect, List<Emission> emissions) {}

    private final RocksDB db;
    private final Options options;
    private final WriteOptions writeOptions = new WriteOptions();

    private CaptureStore(RocksDB db, Options options) {
        this.db = db;
        this.options = options;
    }

    public static CaptureStore open(Path dir) {
        try {
            Files.createDirectories(dir);
            Options options = new Options().setCreateIfMissing(true);
            return new CaptureStore(RocksDB.open(options, dir.toString()), options);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot open the capture store at " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The next offset to apply: 0 for a new store. */
    public long nextOffset() {
        byte[] value = get(CHECKPOINT);
        return value == null ? 0 : ByteBuffer.wrap(value).getLong();
    }

    public AttemptState state(String runId, String attempt) {
        byte[] value = get(bytes(STATE + runId + "/" + attempt));
        return value == null ? null : Json.decode(value, AttemptState.class);
    }

    /** Every attempt of {@code runId} this store holds, by attempt id. */
    public SortedMap<String, AttemptState> states(String runId) {
        SortedMap<String, AttemptState> out = new TreeMap<>();
        forEachState(runId + "/", (attemptKey, state) -> out.put(attemptKey.substring(runId.length() + 1), state));
        return out;
    }

    /**
     * The accepted entries of an attempt, in call id order. An entry whose bytes cannot be read is
     * returned with only its call id, so the builder reports it as malformed.
     */
    public List<CaptureEntry> entries(String runId, String attempt) {
        List<CaptureEntry> out = new ArrayList<>();
        String prefix = ENTRY + runId + "/" + attempt + "/";
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(bytes(prefix)); it.isValid(); it.next()) {
                String key = new String(it.key(), StandardCharsets.UTF_8);
                if (!key.startsWith(prefix)) {
                    break;
                }
                String callId = key.substring(prefix.length());
                try {
                    out.add(Json.decode(it.value(), CaptureEntry.class));
                } catch (WireFormatException e) {
                    out.add(new CaptureEntry(null, runId, attempt, callId, null, null, null, null, null, null, null, null));
                }
            }
        }
        return out;
    }

    /** Applies the record at {@code offset}; its effect and the new checkpoint are written atomically. */
    public Outcome apply(String key, byte[] value, long offset) {
        CaptureKey parsed = CaptureKey.parse(key);
        try (WriteBatch batch = new WriteBatch()) {
            Outcome outcome = parsed == null ? new Outcome(Effect.IGNORED, List.of()) : apply(parsed, value, batch);
            batch.put(CHECKPOINT, ByteBuffer.allocate(8).putLong(offset + 1).array());
            db.write(writeOptions, batch);
            return outcome;
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot write the capture store: " + e.getMessage(), e);
        }
    }

    private Outcome apply(CaptureKey key, byte[] value, WriteBatch batch) throws RocksDBException {
        AttemptState state = state(key.runId(), key.attempt());
        return switch (key.kind()) {
            case ENTRY -> applyEntry(key, value, state, batch);
            case INCOMPLETE -> applyMark(key, value, state, batch);
            case FREEZE -> applyFreeze(key, value, state, batch);
            case RETIRE -> applyRetire(key, value, state, batch);
            case RETIRED -> applyRetired(key, value, state, batch);
        };
    }

    private Outcome applyEntry(CaptureKey key, byte[] value, AttemptState state, WriteBatch batch) throws RocksDBException {
        if (value == null) {
            if (state != null && state.pendingTombstones().contains(key.name())) {
                List<String> left = new ArrayList<>(state.pendingTombstones());
                left.remove(key.name());
                put(batch, key, with(state, left));
            }
            return new Outcome(Effect.IGNORED, List.of());
        }
        if (state != null && state.status() == Status.RETIRED) {
            // A late writer must not recreate retired evidence: refuse it and delete it from the topic.
            List<String> tombstones = new ArrayList<>(state.pendingTombstones());
            if (!tombstones.contains(key.name())) {
                tombstones.add(key.name());
            }
            put(batch, key, with(state, tombstones));
            return new Outcome(Effect.LATE_WRITE_REFUSED, List.of(new Emission(key.toString(), null)));
        }
        AttemptState current = state == null ? AttemptState.open() : state;
        long hash = contentHash(value);
        Long existing = current.entries().get(key.name());
        if (existing != null && existing == hash) {
            return new Outcome(Effect.DUPLICATE, List.of());
        }
        if (existing != null || current.status() == Status.FROZEN) {
            String cause = (current.status() == Status.FROZEN ? "late:" : "conflict:") + key.name();
            String reason = current.status() == Status.FROZEN
                    ? "entry " + key.name() + " arrived after the freeze"
                    : "call_id " + key.name() + " was written twice with different content";
            return detect(key, current, cause, reason, batch);
        }
        Map<String, Long> entries = new LinkedHashMap<>(current.entries());
        entries.put(key.name(), hash);
        batch.put(bytes(ENTRY + key.attemptKey() + "/" + key.name()), value);
        put(batch, key, new AttemptState(current.status(), current.version() + 1, current.snapshotId(), entries,
                current.marks(), current.retiredAtMs(), current.pendingMarks(), current.pendingRetire(),
                current.pendingTombstones()));
        return new Outcome(Effect.ENTRY_APPLIED, List.of());
    }

    private Outcome detect(CaptureKey key, AttemptState state, String cause, String reason, WriteBatch batch)
            throws RocksDBException {
        if (state.marks().containsKey(cause) || state.pendingMarks().containsKey(cause)) {
            return new Outcome(Effect.INCOMPLETE_DETECTED, List.of());
        }
        Map<String, String> pending = new LinkedHashMap<>(state.pendingMarks());
        pending.put(cause, reason);
        put(batch, key, new AttemptState(state.status(), state.version(), state.snapshotId(), state.entries(),
                state.marks(), state.retiredAtMs(), pending, state.pendingRetire(), state.pendingTombstones()));
        return new Outcome(Effect.INCOMPLETE_DETECTED, List.of(markEmission(key.runId(), key.attempt(), cause, reason)));
    }

    private Outcome applyMark(CaptureKey key, byte[] value, AttemptState state, WriteBatch batch) throws RocksDBException {
        if (value == null || (state != null && state.status() == Status.RETIRED)) {
            return new Outcome(Effect.IGNORED, List.of());
        }
        AttemptState current = state == null ? AttemptState.open() : state;
        if (current.marks().containsKey(key.name())) {
            return new Outcome(Effect.DUPLICATE, List.of());
        }
        String reason = reasonOf(value);
        Map<String, String> marks = new LinkedHashMap<>(current.marks());
        marks.put(key.name(), reason);
        Map<String, String> pending = new LinkedHashMap<>(current.pendingMarks());
        pending.remove(key.name());
        put(batch, key, new AttemptState(current.status(), current.version() + 1, current.snapshotId(), current.entries(),
                marks, current.retiredAtMs(), pending, current.pendingRetire(), current.pendingTombstones()));
        return new Outcome(Effect.MARK_APPLIED, List.of());
    }

    private Outcome applyFreeze(CaptureKey key, byte[] value, AttemptState state, WriteBatch batch) throws RocksDBException {
        if (value == null || (state != null && state.status() == Status.RETIRED)) {
            return new Outcome(Effect.IGNORED, List.of());
        }
        FreezeCommand freeze;
        try {
            freeze = Json.decode(value, FreezeCommand.class);
        } catch (WireFormatException e) {
            return new Outcome(Effect.IGNORED, List.of());
        }
        AttemptState current = state == null ? AttemptState.open() : state;
        put(batch, key, new AttemptState(Status.FROZEN, current.version() + 1, freeze.snapshotId(), current.entries(),
                current.marks(), current.retiredAtMs(), current.pendingMarks(), current.pendingRetire(),
                current.pendingTombstones()));
        return new Outcome(Effect.FROZEN, List.of());
    }

    private Outcome applyRetire(CaptureKey key, byte[] value, AttemptState state, WriteBatch batch) throws RocksDBException {
        if (value == null) {
            return new Outcome(Effect.IGNORED, List.of());
        }
        RetireCommand retire;
        try {
            retire = Json.decode(value, RetireCommand.class);
        } catch (WireFormatException e) {
            return new Outcome(Effect.IGNORED, List.of());
        }
        if (state == null || state.status() != Status.FROZEN || !retire.snapshotId().equals(state.snapshotId())
                || retire.version() != state.version()) {
            return new Outcome(state != null && state.status() == Status.RETIRED ? Effect.IGNORED : Effect.RETIRE_STALE,
                    List.of());
        }
        put(batch, key, new AttemptState(state.status(), state.version(), state.snapshotId(), state.entries(), state.marks(),
                state.retiredAtMs(), state.pendingMarks(), new RetireMatch(retire.snapshotId(), retire.version()),
                state.pendingTombstones()));
        return new Outcome(Effect.RETIRE_MATCHED, List.of(new Emission(CaptureKey.of(key.runId(), key.attempt(),
                CaptureKey.RETIRED), value)));
    }

    private Outcome applyRetired(CaptureKey key, byte[] value, AttemptState state, WriteBatch batch) throws RocksDBException {
        if (value == null) {
            // The sweep of a retired attempt: its marker goes, and with it everything left of it.
            deleteAttempt(key, batch);
            return new Outcome(Effect.SWEPT, List.of());
        }
        if (state != null && state.status() == Status.RETIRED) {
            return new Outcome(Effect.DUPLICATE, List.of());
        }
        long retiredAt;
        try {
            retiredAt = Json.decode(value, RetireCommand.class).ts();
        } catch (WireFormatException e) {
            retiredAt = 0;
        }
        AttemptState current = state == null ? AttemptState.open() : state;
        List<String> tombstones = new ArrayList<>(current.pendingTombstones());
        List<Emission> emissions = new ArrayList<>();
        for (String callId : current.entries().keySet()) {
            batch.delete(bytes(ENTRY + key.attemptKey() + "/" + callId));
            if (!tombstones.contains(callId)) {
                tombstones.add(callId);
            }
            emissions.add(new Emission(CaptureKey.entry(key.runId(), key.attempt(), callId), null));
        }
        put(batch, key, new AttemptState(Status.RETIRED, current.version(), current.snapshotId(), Map.of(), current.marks(),
                retiredAt, Map.of(), null, tombstones));
        return new Outcome(Effect.RETIRED, emissions);
    }

    /**
     * Everything this partition's state still owes the topic: marks detected but not yet applied,
     * matched retires without their marker, tombstones of retired evidence. Published once a
     * restore has caught up; duplicates are harmless.
     */
    public List<Emission> owed() {
        List<Emission> owed = new ArrayList<>();
        forEachState((attemptKey, state) -> {
            String[] parts = attemptKey.split("/", 2);
            state.pendingMarks().forEach((cause, reason) -> owed.add(markEmission(parts[0], parts[1], cause, reason)));
            if (state.pendingRetire() != null && state.status() == Status.FROZEN) {
                owed.add(new Emission(CaptureKey.of(parts[0], parts[1], CaptureKey.RETIRED), Json.encode(new RetireCommand(
                        SchemaVersion.CURRENT, parts[0], parts[1], state.pendingRetire().snapshotId(),
                        state.pendingRetire().version(), System.currentTimeMillis(), null))));
            }
            for (String callId : state.pendingTombstones()) {
                owed.add(new Emission(CaptureKey.entry(parts[0], parts[1], callId), null));
            }
        });
        return owed;
    }

    /** Tombstones that sweep every attempt retired longer than {@code ttl} before {@code nowMs}. */
    public List<Emission> sweep(long nowMs, Duration ttl) {
        List<Emission> sweep = new ArrayList<>();
        forEachState((attemptKey, state) -> {
            if (state.status() == Status.RETIRED && state.retiredAtMs() + ttl.toMillis() < nowMs) {
                String[] parts = attemptKey.split("/", 2);
                sweep.add(new Emission(CaptureKey.of(parts[0], parts[1], CaptureKey.FREEZE), null));
                sweep.add(new Emission(CaptureKey.of(parts[0], parts[1], CaptureKey.RETIRE), null));
                for (String cause : state.marks().keySet()) {
                    sweep.add(new Emission(CaptureKey.of(parts[0], parts[1], CaptureKey.INCOMPLETE_PREFIX + cause), null));
                }
                // Last: applying this tombstone removes the attempt's state.
                sweep.add(new Emission(CaptureKey.of(parts[0], parts[1], CaptureKey.RETIRED), null));
            }
        });
        return sweep;
    }

    /** How many attempts this partition holds state for. */
    public int attempts() {
        int[] count = {0};
        forEachState((k, s) -> count[0]++);
        return count[0];
    }

    @Override
    public void close() {
        writeOptions.close();
        db.close();
        options.close();
    }

    private void forEachState(BiConsumer<String, AttemptState> visitor) {
        forEachState("", visitor);
    }

    /** Visits the states whose attempt key ({@code run_id/attempt}) starts with {@code prefix}. */
    private void forEachState(String prefix, BiConsumer<String, AttemptState> visitor) {
        String start = STATE + prefix;
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(bytes(start)); it.isValid(); it.next()) {
                String key = new String(it.key(), StandardCharsets.UTF_8);
                if (!key.startsWith(start)) {
                    break;
                }
                visitor.accept(key.substring(STATE.length()), Json.decode(it.value(), AttemptState.class));
            }
        }
    }

    private void deleteAttempt(CaptureKey key, WriteBatch batch) throws RocksDBException {
        String prefix = ENTRY + key.attemptKey() + "/";
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(bytes(prefix)); it.isValid(); it.next()) {
                if (!new String(it.key(), StandardCharsets.UTF_8).startsWith(prefix)) {
                    break;
                }
                batch.delete(it.key());
            }
        }
        batch.delete(bytes(STATE + key.attemptKey()));
    }

    private static Emission markEmission(String runId, String attempt, String cause, String reason) {
        return new Emission(CaptureKey.of(runId, attempt, CaptureKey.INCOMPLETE_PREFIX + cause), Json.encode(new IncompleteMark(
                SchemaVersion.CURRENT, runId, attempt, cause, reason, System.currentTimeMillis(), null)));
    }

    private static AttemptState with(AttemptState s, List<String> tombstones) {
        return new AttemptState(s.status(), s.version(), s.snapshotId(), s.entries(), s.marks(), s.retiredAtMs(),
                s.pendingMarks(), s.pendingRetire(), tombstones);
    }

    private void put(WriteBatch batch, CaptureKey key, AttemptState state) throws RocksDBException {
        batch.put(bytes(STATE + key.attemptKey()), Json.encode(state));
    }

    private static String reasonOf(byte[] value) {
        try {
            IncompleteMark mark = Json.decode(value, IncompleteMark.class);
            return mark.reason() == null ? mark.cause() : mark.reason();
        } catch (WireFormatException e) {
            return "unreadable incomplete mark";
        }
    }

    /**
     * A hash of what an entry says, ignoring {@code created_at} (diagnostic only): every JSON
     * token but that field's, streamed, so equal content hashes equally whatever the spacing.
     */
    static long contentHash(byte[] value) {
        long h = 0xcbf29ce484222325L;
        try (JsonParser parser = Json.mapper().getFactory().createParser(value)) {
            int depth = 0;
            JsonToken token;
            while ((token = parser.nextToken()) != null) {
                if (token == JsonToken.FIELD_NAME && depth == 1 && "created_at".equals(parser.currentName())) {
                    parser.nextToken();
                    parser.skipChildren();
                    continue;
                }
                if (token.isStructStart()) {
                    depth++;
                } else if (token.isStructEnd()) {
                    depth--;
                }
                h = (h ^ token.id()) * 0x100000001b3L;
                if (token.isScalarValue() || token == JsonToken.FIELD_NAME) {
                    char[] text = parser.getTextCharacters();
                    int offset = parser.getTextOffset();
                    for (int i = offset, end = offset + parser.getTextLength(); i < end; i++) {
                        h = (h ^ text[i]) * 0x100000001b3L;
                    }
                }
            }
            return h;
        } catch (IOException e) {
            // Unreadable entries hash by their bytes; the builder reports them as malformed.
            long b = 0xcbf29ce484222325L;
            for (byte x : value) {
                b = (b ^ (x & 0xff)) * 0x100000001b3L;
            }
            return b;
        }
    }

    private byte[] get(byte[] key) {
        try {
            return db.get(key);
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot read the capture store: " + e.getMessage(), e);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
