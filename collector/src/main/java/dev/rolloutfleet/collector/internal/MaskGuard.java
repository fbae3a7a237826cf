package dev.rolloutfleet.collector.internal;

import dev.rolloutfleet.collector.CollectorConfig.MaskLimit;
import dev.rolloutfleet.collector.build.BuiltTrajectory;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the fraction of participating samples that are masked. A high fraction means the
 * training data is drying up (a tokenizer drift, a broken capture path), which a trainer should
 * hear about before it trains on the few samples left. Trips once, loudly; the collector then
 * reports unhealthy. Written by the consumer thread; {@link #tripped()} may be read from any.
 */
final class MaskGuard {

    private static final Logger log = LoggerFactory.getLogger(MaskGuard.class);

    private final MaskLimit limit;
    private final Map<String, Integer> maskedByReason = new TreeMap<>();
    private int samples;
    private int masked;
    private volatile boolean tripped;

    MaskGuard(MaskLimit limit) {
        this.limit = limit;
    }

    /** Counts one build; returns true when this build trips the guard. */
    boolean record(BuiltTrajectory built) {
        samples++;
        if (built.masked()) {
            masked++;
            maskedByReason.merge(built.maskReason(), 1, Integer::sum);
        }
        if (!tripped && samples >= limit.minSamples() && (double) masked / samples > limit.maxFraction()) {
            tripped = true;
            log.error("MASK LIMIT: {} of {} participating samples ({}%) are masked, over --max-mask-fraction {}; by reason {}."
                    + " The collector now reports unhealthy{}.", masked, samples,
                    Math.round(100.0 * masked / samples), limit.maxFraction(), maskedByReason,
                    limit.stopConsuming() ? " and stops consuming (--stop-on-mask-limit)" : "");
            return true;
        }
        return false;
    }

    boolean tripped() {
        return tripped;
    }
}
