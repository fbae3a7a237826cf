package dev.rolloutfleet.ops;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.collector.CollectorConfig;
import dev.rolloutfleet.collector.sink.DedupeIndex;
import dev.rolloutfleet.collector.sink.PartitionSegments;
import dev.rolloutfleet.common.wire.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code fleet bench sink}: the collector's durable sink (segment files plus the RocksDB dedupe
 * index) writing the same lines twice: once with group commit (one fsync per group, bounded by
 * the collector's default group bytes and by one poll's worth of lines) and once with one fsync
 * per line. Lines look like durable records: a result with a few steps and a rebuilt token
 * sequence (tokens, loss mask, log-probs).
 */
@Command(name = "sink", mixinStandardHelpOptions = true,
        description = "Durable sink lines/s with group commit against one fsync per line, on the same data.")
final class SinkBench implements Callable<Integer> {

    @Option(names = "--lines", defaultValue = "5000", description = "Lines written in each mode (default ${DEFAULT-VALUE}).")
    int lines;

    @Option(names = "--tokens", defaultValue = "800", description = "Tokens per line (default ${DEFAULT-VALUE}).")
    int tokens;

    @Option(names = "--group-lines", defaultValue = "500",
            description = "Lines per group at most: one consumer poll's worth (default ${DEFAULT-VALUE}).")
    int groupLines;

    @Option(names = "--rounds", defaultValue = "3", description = "Rounds of both modes; medians are reported (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--dir", description = "Where to write (default: a temporary directory); fsync cost depends on the disk.")
    Path dir;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PrintStream log = System.err;
        long groupBytes = CollectorConfig.GroupCommit.DEFAULT.maxBytes();
        List<byte[]> data = lines();
        long bytes = data.stream().mapToLong(l -> l.length + 1).sum();
        Path root = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("bench-sink-");
        try {
            log.printf(Locale.ROOT, "%d lines of %d bytes on average, in %s%n", data.size(), bytes / data.size(), root);
            // Warm the JIT on both paths, then alternate the modes so drift in the disk hits both alike.
            run(root.resolve("warmup-1"), data.subList(0, Math.min(500, data.size())), 1, 0);
            run(root.resolve("warmup-2"), data, groupLines, groupBytes);
            double[] perRecordRuns = new double[rounds];
            double[] groupedRuns = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                perRecordRuns[r] = run(root.resolve("per-record-" + r), data, 1, 0);
                groupedRuns[r] = run(root.resolve("group-commit-" + r), data, groupLines, groupBytes);
                log.printf(Locale.ROOT, "round %d: one fsync per line %.0f lines/s; group commit (<= %d lines, <= %d bytes per fsync) %.0f lines/s%n",
                        r + 1, perRecordRuns[r], groupLines, groupBytes, groupedRuns[r]);
            }
            double perRecord = median(perRecordRuns);
            double grouped = median(groupedRuns);
            ObjectNode summary = Json.object().put("lines", data.size()).put("bytes_per_line", bytes / data.size())
                    .put("group_lines", groupLines).put("rounds", rounds).put("group_commit_per_s", Math.round(grouped))
                    .put("per_record_fsync_per_s", Math.round(perRecord)).put("speedup", Math.round(grouped / perRecord * 10) / 10.0);
            out.println(Json.encodeToString(summary));
            return 0;
        } finally {
            if (dir == null) {
                Services.deleteTree(root);
            }
        }
    }

    /** Lines per second writing {@code data} with a sync after every {@code maxLines} lines or {@code maxBytes} bytes. */
    private static double run(Path dir, List<byte[]> data, int maxLines, long maxBytes) throws IOException {
        try (DedupeIndex index = DedupeIndex.open(dir.resolve("dedupe"));
                PartitionSegments segments = PartitionSegments.open(dir, 0, 256L << 20, index)) {
            long start = System.nanoTime();
            int inGroup = 0;
            long groupSize = 0;
            for (int i = 0; i < data.size(); i++) {
                segments.append("bench-" + i, data.get(i));
                inGroup++;
                groupSize += data.get(i).length + 1;
                if (inGroup >= maxLines || (maxBytes > 0 && groupSize >= maxBytes)) {
                    segments.sync();
                    inGroup = 0;
                    groupSize = 0;
                }
            }
            segments.sync();
            return data.size() / ((System.nanoTime() - start) / 1e9);
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private List<byte[]> lines() {
        SplittableRandom random = new SplittableRandom(11);
        List<byte[]> out = new ArrayList<>(lines);
        for (int i = 0; i < lines; i++) {
            ObjectNode line = Json.object().put("run_id", "bench-" + i).put("attempt", "a" + i).put("status", "ok");
            ArrayNode steps = line.putArray("trajectories").addObject().put("env_id", "corridor").putArray("steps");
            for (int s = 0; s < 6; s++) {
                steps.addObject().put("reward", s == 5 ? 1.0 : 0.0).put("done", s == 5).putObject("obs").put("position", s)
                        .put("goal", 5);
            }
            ArrayNode ids = line.putArray("tokens");
            ArrayNode mask = line.putArray("loss_mask");
            ArrayNode logprobs = line.putArray("logprobs");
            for (int t = 0; t < tokens; t++) {
                boolean generated = t % 100 >= 80;
                ids.add(random.nextInt(50_000));
                mask.add(generated ? 1 : 0);
                logprobs.add(generated ? -random.nextDouble() : 0.0);
            }
            out.add(Json.encode(line));
        }
        return out;
    }
}
