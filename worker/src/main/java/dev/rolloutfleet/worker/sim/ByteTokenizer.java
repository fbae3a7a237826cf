package dev.rolloutfleet.worker.sim;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The simulated server's tokenizer: one token per UTF-8 byte, id = byte + 3 (0..2 are reserved).
 * Trivially reversible and prefix-stable, which is all the capture path needs from a tokenizer.
 */
final class ByteTokenizer {

    static final int OFFSET = 3;

    private ByteTokenizer() {}

    static List<Integer> encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        List<Integer> ids = new ArrayList<>(bytes.length);
        for (byte b : bytes) {
            ids.add((b & 0xff) + OFFSET);
        }
        return ids;
    }
}
