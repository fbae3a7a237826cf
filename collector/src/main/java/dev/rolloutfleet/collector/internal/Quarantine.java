package dev.rolloutfleet.collector.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Base64;

/**
 * Keeps result records that cannot be read ({@code rejected-results.jsonl}): the source position,
 * the reason and the original bytes in base64, so nothing a worker published is silently lost.
 * Synced with the batch it belongs to. Confined to the consumer thread.
 */
final class Quarantine implements Closeable {

    private final Path file;
    private FileChannel channel;
    private boolean dirty;

    /** The file is created on the first rejected record, so a clean run leaves none. */
    Quarantine(Path dataDir) {
        this.file = dataDir.resolve("rejected-results.jsonl");
    }

    void add(String topic, int partition, long offset, String key, byte[] value, String code, String reason) throws IOException {
        ObjectNode line = Json.object().put("topic", topic).put("partition", partition).put("offset", offset)
                .put("key", key).put("error_code", code).put("error_message", reason)
                .put("value_base64", value == null ? null : Base64.getEncoder().encodeToString(value));
        byte[] bytes = (Json.encodeToString(line) + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (channel == null) {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
        dirty = true;
    }

    void sync() throws IOException {
        if (dirty) {
            channel.force(false);
            dirty = false;
        }
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            sync();
            channel.close();
        }
    }
}
