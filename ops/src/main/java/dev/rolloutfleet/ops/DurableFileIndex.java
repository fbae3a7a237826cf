package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rolloutfleet.common.wire.Json;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Follows the durable segment files under some data directories and knows every run id written
 * so far, and how many lines each has. Reads only what was appended since the last look.
 * Thread-safe.
 */
final class DurableFileIndex {

    private final List<Path> dataDirs;
    private final Map<Path, Long> readUpTo = new HashMap<>();
    private final Map<String, Integer> lines = new HashMap<>();

    DurableFileIndex(List<Path> dataDirs) {
        this.dataDirs = dataDirs;
    }

    synchronized boolean contains(String runId) throws IOException {
        refresh();
        return lines.containsKey(runId);
    }

    synchronized Set<String> runIds() throws IOException {
        refresh();
        return new HashSet<>(lines.keySet());
    }

    /** Lines beyond the first, over all run ids. */
    synchronized int duplicateLines() throws IOException {
        refresh();
        return lines.values().stream().mapToInt(n -> n - 1).sum();
    }

    private void refresh() throws IOException {
        for (Path dir : dataDirs) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(p -> p.getFileName().toString().matches("results-p\\d+-\\d+\\.jsonl")).toList()) {
                    readNew(file);
                }
            }
        }
    }

    private void readNew(Path file) throws IOException {
        long from = readUpTo.getOrDefault(file, 0L);
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (length <= from) {
                return;
            }
            byte[] bytes = new byte[(int) (length - from)];
            in.seek(from);
            in.readFully(bytes);
            int lineStart = 0;
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] == '\n') {
                    JsonNode runId = Json.mapper().readTree(new String(bytes, lineStart, i - lineStart, StandardCharsets.UTF_8))
                            .get("run_id");
                    if (runId != null) {
                        lines.merge(runId.asText(), 1, Integer::sum);
                    }
                    lineStart = i + 1;
                }
            }
            // A line still being written is read next time, whole.
            readUpTo.put(file, from + lineStart);
        }
    }
}
