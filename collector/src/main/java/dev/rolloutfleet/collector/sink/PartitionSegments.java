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
 * last line (a crash mid-append) by truncating it, and learns every {@code run_id} already
 * written so a redelivered result is not written twice. Nothing is durable until {@link #sync()}
 * returns. Confined to the collector's consumer thread.
 */
public final class PartitionSegments implements Closeable {

    private static final Logger log = LoggerFactory.getLogger(PartitionSegments.class);
    private static final Pattern NAME = Pattern.compile("results-p(\\d+)-(\\d+)\\.jsonl");

    private final Path dataDir;
    private final int partition;
    private final long maxSegmentBytes;
    private final Set<String> durableRunIds = new HashSet<>();
    private FileChannel channel;
    private Path currentFile;
    private int currentSeq;
    private boolean dirty;

    private PartitionSegments(Path dataDir, int partition, long maxSegmentBytes) {
        this.dataDir = dataDir;
        this.partition = partition;
        this.maxSegmentBytes = maxSegmentBytes;
    }

    /** Opens (creating if needed) the segments of {@code partition}, repairing and indexing them. */
    public static PartitionSegments open(Path dataDir, int partition, long maxSegmentBytes) throws IOException {
        PartitionSegments segments = new PartitionSegments(dataDir, partition, maxSegmentBytes);
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
        for (Path file : existing) {
            indexRunIds(file);
        }
        currentSeq = seqOf(last);
        currentFile = last;
        channel = FileChannel.open(last, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }

    /** True when a line for {@code runId} is already in these segments (durable or pending sync). */
    public boolean contains(String runId) {
        return durableRunIds.contains(runId);
    }

    /**
     * Appends one line (a newline is added) for {@code runId}.
     *
     * @return where the line starts: its file and byte offset
     */
    public Position append(String runId, byte[] json) throws IOException {
        if (channel.size() > 0 && channel.size() + json.length + 1 > maxSegmentBytes) {
            sync();
            channel.close();
            roll(currentSeq + 1);
        }
        long offset = channel.size();
        ByteBuffer buffer = ByteBuffer.allocate(json.length + 1).put(json).put((byte) '\n').flip();
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
        durableRunIds.add(runId);
        dirty = true;
        return new Position(currentFile, offset);
    }

    /** Forces every appended line to disk. */
    public void sync() throws IOException {
        if (dirty) {
            channel.force(false);
            dirty = false;
        }
    }

    public int partition() {
        return partition;
    }

    public int size() {
        return durableRunIds.size();
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

    private void indexRunIds(Path file) throws IOException {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8))) {
            String line;
            long number = 0;
            while ((line = reader.readLine()) != null) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode runId = Json.mapper().readTree(line).get("run_id");
                if (runId == null || !runId.isTextual()) {
                    log.warn("{} line {} has no run_id; it is kept but cannot deduplicate", file, number);
                    continue;
                }
                durableRunIds.add(runId.asText());
            }
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
