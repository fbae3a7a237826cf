package dev.rolloutfleet.collector.sink;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.Json;
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable JSON-lines segments of one results partition: {@code results-pPPP-SSSSSS.jsonl}
 * under the data directory, appended in order, rolled over past a size. Opening repairs a torn
 * last line (a crash mid-append) by truncating it, and catches the {@link DedupeIndex} up with the
 * lines after its checkpoint, so a redelivered result is not written twice. Nothing is durable
 * until {@link #sync()} returns; the index learns the synced runs right after. Confined to the
 * collector's consumer thread.
 */
public final class PartitionSegments implements Closeable {

    private static final Logger log = LoggerFactory.getLogger(PartitionSegments.class);
    private static final Pattern NAME = Pattern.compile("results-p(\\d+)-(\\d+)\\.jsonl");

    private final Path dataDir;
    private final int partition;
    private final long maxSegmentBytes;
    private final DedupeIndex index;
    /** Runs appended since the last sync: not in the index yet. */
    private final Set<String> unsynced = new HashSet<>();
    private FileChannel channel;
    private Path currentFile;
    private int currentSeq;
    private boolean dirty;
    /**
     * Lines appended since the last write, so a group costs one write call rather than one per
     * line. They are not durable before {@link #sync()} either way.
     */
    private final java.io.ByteArrayOutputStream pending = new java.io.ByteArrayOutputStream(1 << 16);
    private static final int PENDING_LIMIT = 1 << 20;

    private PartitionSegments(Path dataDir, int partition, long maxSegmentBytes, DedupeIndex index) {
        this.dataDir = dataDir;
        this.partition = partition;
        this.maxSegmentBytes = maxSegmentBytes;
        this.index = index;
    }

    /** Opens (creating if needed) the segments of {@code partition}, repairing them and catching the index up. */
    public static PartitionSegments open(Path dataDir, int partition, long maxSegmentBytes, DedupeIndex index)
            throws IOException {
        PartitionSegments segments = new PartitionSegments(dataDir, partition, maxSegmentBytes, index);
        segments.recover();
        return segments;
    }

    private void recover() throws IOException {
        Files.createDirectories(dataDir);
        List<Path> existing = segmentFiles(dataDir, partition);
        if (existing.isEmpty()) {
            roll(0);
            return;
        }
        Path last = existing.get(existing.size() - 1);
        truncateTornTail(last);
        catchUpIndex(existing);
        currentSeq = seqOf(last);
        currentFile = last;
        channel = FileChannel.open(last, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }

    /** Indexes the lines after the index's checkpoint: those fsynced just before a crash. */
    private void catchUpIndex(List<Path> existing) throws IOException {
        DedupeIndex.Checkpoint checkpoint = index.checkpoint(partition);
        int caughtUp = 0;
        for (Path file : existing) {
            String name = file.getFileName().toString();
            long from = 0;
            if (checkpoint != null) {
                int order = name.compareTo(checkpoint.file());
                if (order < 0) {
                    continue;
                }
                from = order == 0 ? checkpoint.byteOffset() : 0;
            }
            List<String> runIds = new ArrayList<>();
            long end = readRunIds(file, from, runIds);
            index.record(partition, runIds, new DedupeIndex.Checkpoint(name, end));
            caughtUp += runIds.size();
        }
        if (caughtUp > 0) {
            log.info("partition {}: indexed {} lines written after the dedupe checkpoint", partition, caughtUp);
        }
    }

    /** True when a line for {@code runId} is already in these segments (durable or pending sync). */
    public boolean contains(String runId) {
        return unsynced.contains(runId) || index.contains(partition, runId);
    }

    /**
     * Appends one line (a newline is added) for {@code runId}.
     *
     * @return where the line starts: its file and byte offset
     */
    public Position append(String runId, byte[] json) throws IOException {
        long size = channel.size() + pending.size();
        if (size > 0 && size + json.length + 1 > maxSegmentBytes) {
            sync();
            channel.close();
            roll(currentSeq + 1);
        }
        long offset = channel.size() + pending.size();
        pending.write(json, 0, json.length);
        pending.write('\n');
        if (pending.size() >= PENDING_LIMIT) {
            writePending();
        }
        unsynced.add(runId);
        dirty = true;
        return new Position(currentFile, offset);
    }

    /** Forces every appended line to disk, then records their runs in the dedupe index. */
    public void sync() throws IOException {
        if (dirty) {
            writePending();
            channel.force(false);
            dirty = false;
            index.record(partition, unsynced, new DedupeIndex.Checkpoint(currentFile.getFileName().toString(), channel.size()));
            unsynced.clear();
        }
    }

    private void writePending() throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(pending.toByteArray());
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
        pending.reset();
    }

    public int partition() {
        return partition;
    }

    @Override
    public void close() throws IOException {
        if (channel != null && channel.isOpen()) {
            sync();
            channel.close();
        }
    }

    /** Where a line starts. */
    public record Position(Path file, long byteOffset) {}

    private void roll(int seq) throws IOException {
        currentSeq = seq;
        currentFile = dataDir.resolve(String.format(Locale.ROOT, "results-p%03d-%06d.jsonl", partition, seq));
        channel = FileChannel.open(currentFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        syncDirectory(dataDir);
    }

    /** Collects the run ids of the whole lines from {@code from}; returns the offset after the last one. */
    private static long readRunIds(Path file, long from, List<String> out) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ch.position(from);
            BufferedReader reader = new BufferedReader(new InputStreamReader(java.nio.channels.Channels.newInputStream(ch),
                    StandardCharsets.UTF_8));
            long position = from;
            String line;
            while ((line = reader.readLine()) != null) {
                position += line.getBytes(StandardCharsets.UTF_8).length + 1;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode runId = Json.mapper().readTree(line).get("run_id");
                if (runId != null && runId.isTextual()) {
                    out.add(runId.asText());
                } else {
                    log.warn("{} has a line without run_id; it is kept but cannot deduplicate", file);
                }
            }
            return position;
        }
    }

    /** A crash mid-append leaves a partial last line; it was never fsynced nor committed, so it goes. */
    static void truncateTornTail(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            long keep = 0;
            ByteBuffer chunk = ByteBuffer.allocate(64 * 1024);
            for (long end = size; end > 0 && keep == 0; ) {
                long start = Math.max(0, end - chunk.capacity());
                chunk.clear().limit((int) (end - start));
                while (chunk.hasRemaining() && ch.read(chunk, start + chunk.position()) >= 0) {
                    // read the whole window
                }
                for (int i = (int) (end - start) - 1; i >= 0; i--) {
                    if (chunk.get(i) == '\n') {
                        keep = start + i + 1;
                        break;
                    }
                }
                end = start;
            }
            if (keep < size) {
                log.warn("{}: truncating a torn last line ({} bytes)", file, size - keep);
                ch.truncate(keep);
                ch.force(true);
            }
        }
    }

    static List<Path> segmentFiles(Path dataDir, int partition) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> list = Files.list(dataDir)) {
            list.forEach(p -> {
                Matcher m = NAME.matcher(p.getFileName().toString());
                if (m.matches() && Integer.parseInt(m.group(1)) == partition) {
                    files.add(p);
                }
            });
        }
        files.sort((a, b) -> Integer.compare(seqOf(a), seqOf(b)));
        return files;
    }

    private static int seqOf(Path file) {
        Matcher m = NAME.matcher(file.getFileName().toString());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a segment file: " + file);
        }
        return Integer.parseInt(m.group(2));
    }

    /** Makes a new file's directory entry durable, not only its contents. */
    static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
