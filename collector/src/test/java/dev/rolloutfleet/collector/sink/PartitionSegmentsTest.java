package dev.rolloutfleet.collector.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionSegmentsTest {

    @TempDir
    Path dir;

    private DedupeIndex index;

    @org.junit.jupiter.api.BeforeEach
    void openIndex() {
        index = DedupeIndex.open(dir.resolve("dedupe"));
    }

    @org.junit.jupiter.api.AfterEach
    void closeIndex() {
        index.close();
    }

    private static byte[] line(String runId) {
        return ("{\"run_id\":\"" + runId + "\",\"status\":\"ok\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void reopeningKnowsEveryRunIdAlreadyWritten() throws Exception {
        try (PartitionSegments segments = PartitionSegments.open(dir, 3, 1 << 20, index)) {
            segments.append("a", line("a"));
            segments.append("b", line("b"));
            segments.sync();
        }
        try (PartitionSegments segments = PartitionSegments.open(dir, 3, 1 << 20, index)) {
            assertThat(segments.contains("a")).isTrue();
            assertThat(segments.contains("b")).isTrue();
            assertThat(segments.contains("c")).isFalse();
        }
        try (PartitionSegments other = PartitionSegments.open(dir, 4, 1 << 20, index)) {
            assertThat(other.contains("a")).as("partitions keep their own segments").isFalse();
        }
    }

    @Test
    void linesSyncedButNotIndexedBeforeACrashAreIndexedOnOpen() throws Exception {
        try (PartitionSegments segments = PartitionSegments.open(dir, 2, 1 << 20, index)) {
            segments.append("a", line("a"));
            segments.sync();
        }
        // A crash after the fsync and before the index write: the file has lines the index lacks.
        Path file = PartitionSegments.segmentFiles(dir, 2).get(0);
        Files.write(file, (new String(line("b"), StandardCharsets.UTF_8) + "\n").getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.APPEND);
        assertThat(index.contains(2, "b")).isFalse();
        try (PartitionSegments segments = PartitionSegments.open(dir, 2, 1 << 20, index)) {
            assertThat(segments.contains("a")).isTrue();
            assertThat(segments.contains("b")).isTrue();
        }
        assertThat(index.checkpoint(2).byteOffset()).isEqualTo(Files.size(file));
    }

    @Test
    void aTornLastLineIsTruncatedOnOpen() throws Exception {
        try (PartitionSegments segments = PartitionSegments.open(dir, 0, 1 << 20, index)) {
            segments.append("a", line("a"));
            segments.sync();
        }
        Path file = PartitionSegments.segmentFiles(dir, 0).get(0);
        Files.write(file, "{\"run_id\":\"b\",\"sta".getBytes(StandardCharsets.UTF_8), StandardOpenOption.APPEND);
        try (PartitionSegments segments = PartitionSegments.open(dir, 0, 1 << 20, index)) {
            assertThat(segments.contains("b")).isFalse();
            segments.append("c", line("c"));
            segments.sync();
        }
        assertThat(Files.readAllLines(file)).containsExactly(new String(line("a"), StandardCharsets.UTF_8),
                new String(line("c"), StandardCharsets.UTF_8));
    }

    @Test
    void segmentsRollOverPastTheSizeLimitAndReportWhereEachLineStarts() throws Exception {
        long limit = line("r-00").length * 3L + 3;
        try (PartitionSegments segments = PartitionSegments.open(dir, 1, limit, index)) {
            PartitionSegments.Position first = segments.append("r-00", line("r-00"));
            PartitionSegments.Position second = segments.append("r-01", line("r-01"));
            assertThat(first.byteOffset()).isZero();
            assertThat(second.byteOffset()).isEqualTo(line("r-00").length + 1);
            for (int i = 2; i < 7; i++) {
                segments.append("r-0" + i, line("r-0" + i));
            }
            segments.sync();
        }
        List<Path> files = PartitionSegments.segmentFiles(dir, 1);
        assertThat(files).hasSize(3);
        assertThat(files).extracting(p -> p.getFileName().toString())
                .containsExactly("results-p001-000000.jsonl", "results-p001-000001.jsonl", "results-p001-000002.jsonl");
        long lines = 0;
        for (Path f : files) {
            lines += Files.readAllLines(f).size();
        }
        assertThat(lines).isEqualTo(7);
    }
}
