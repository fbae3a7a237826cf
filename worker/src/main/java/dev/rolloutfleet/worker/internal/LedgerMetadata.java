package dev.rolloutfleet.worker.internal;

import java.util.Base64;
import java.util.BitSet;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * Encodes the offsets finished above a committed offset into Kafka commit metadata, and back.
 * Format: {@code rf1:b:} + base64url of a bitmap whose bit {@code i} is offset
 * {@code committed + 1 + i}. The offset at {@code committed} itself is never finished (else the
 * commit would be past it), so it needs no bit. A bitmap's size depends only on the window
 * ({@code highest finished - committed}), which is what {@link InflightLedger} bounds.
 * Metadata written by anything else decodes to the empty set. Stateless.
 */
public final class LedgerMetadata {

    private static final String PREFIX = "rf1:b:";

    private LedgerMetadata() {}

    /** How many offsets above the committed one a metadata string of {@code maxChars} can describe. */
    static long windowFor(int maxChars) {
        // Four characters of slack absorb base64's rounding to whole bytes and quads.
        long payloadChars = maxChars - PREFIX.length() - 4;
        return Math.max(0, payloadChars * 6);
    }

    static String encode(long committed, NavigableSet<Long> finishedAbove) {
        if (finishedAbove.isEmpty()) {
            return "";
        }
        BitSet bits = new BitSet();
        for (long offset : finishedAbove) {
            long index = offset - committed - 1;
            if (index < 0 || index > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("offset " + offset + " is outside the window above " + committed);
            }
            bits.set((int) index);
        }
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bits.toByteArray());
    }

    /** The finished offsets above {@code committed}; empty for foreign or unreadable metadata. */
    public static NavigableSet<Long> decode(long committed, String metadata) {
        NavigableSet<Long> out = new TreeSet<>();
        if (metadata == null || !metadata.startsWith(PREFIX)) {
            return out;
        }
        byte[] bytes;
        try {
            bytes = Base64.getUrlDecoder().decode(metadata.substring(PREFIX.length()));
        } catch (IllegalArgumentException e) {
            return out;
        }
        BitSet bits = BitSet.valueOf(bytes);
        for (int i = bits.nextSetBit(0); i >= 0; i = bits.nextSetBit(i + 1)) {
            out.add(committed + 1 + i);
        }
        return out;
    }
}
