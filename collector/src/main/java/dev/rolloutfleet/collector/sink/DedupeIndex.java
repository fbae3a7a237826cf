package dev.rolloutfleet.collector.sink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The run ids already durable, per results partition, in RocksDB, with how far into the segments
 * each partition is indexed. Runs are recorded after their lines are fsynced; a crash between the
 * two is repaired on start by indexing the segments' tail from the checkpoint. Thread-safe.
 */
public final class DedupeIndex implements AutoCloseable {

    static {
        RocksDB.loadLibrary();
    }

    /** How far a partition's segments are indexed: every line before {@code byteOffset} of {@code file}. */
    public record Checkpoint(String file, long byteOffset) {}

    private final RocksDB db;
    private final Options options;
    private final WriteOptions writeOptions = new WriteOptions();

    private DedupeIndex(RocksDB db, Options options) {
        this.db = db;
        this.options = options;
    }

    public static DedupeIndex open(Path dir) {
        try {
            Files.createDirectories(dir);
            Options options = new Options().setCreateIfMissing(true);
            return new DedupeIndex(RocksDB.open(options, dir.toString()), options);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot open the dedupe index at " + dir + ": " + e.getMessage(), e);
        }
    }

    public boolean contains(int partition, String runId) {
        try {
            return db.get(runKey(partition, runId)) != null;
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot read the dedupe index: " + e.getMessage(), e);
        }
    }

    /** Records runs whose lines are fsynced, and the new checkpoint, atomically. */
    public void record(int partition, Collection<String> runIds, Checkpoint checkpoint) {
        try (WriteBatch batch = new WriteBatch()) {
            for (String runId : runIds) {
                batch.put(runKey(partition, runId), new byte[0]);
            }
            batch.put(checkpointKey(partition), (checkpoint.file() + "\n" + checkpoint.byteOffset()).getBytes(StandardCharsets.UTF_8));
            db.write(writeOptions, batch);
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot write the dedupe index: " + e.getMessage(), e);
        }
    }

    /** Null when the partition was never indexed. */
    public Checkpoint checkpoint(int partition) {
        try {
            byte[] value = db.get(checkpointKey(partition));
            if (value == null) {
                return null;
            }
            String[] parts = new String(value, StandardCharsets.UTF_8).split("\n", 2);
            return new Checkpoint(parts[0], Long.parseLong(parts[1]));
        } catch (RocksDBException e) {
            throw new IllegalStateException("cannot read the dedupe index: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        writeOptions.close();
        db.close();
        options.close();
    }

    private static byte[] runKey(int partition, String runId) {
        return ("r|" + partition + "|" + runId).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] checkpointKey(int partition) {
        return ("c|" + partition).getBytes(StandardCharsets.UTF_8);
    }
}
