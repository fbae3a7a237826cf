package dev.rolloutfleet.common.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Writes a Dropwizard registry in the Prometheus text exposition format (version 0.0.4). Names
 * are sanitised ({@code worker.rollouts.ok} becomes {@code worker_rollouts_ok}); counters and
 * meters are counters ({@code _total}); timers are summaries in seconds; histograms are
 * summaries; numeric gauges are gauges and other gauges are skipped.
 */
public final class PrometheusText {

    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.99, 0.999};
    private static final double NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);

    private PrometheusText() {}

    public static String write(MetricRegistry registry) {
        StringBuilder out = new StringBuilder(4096);
        for (Map.Entry<String, Gauge> e : registry.getGauges().entrySet()) {
            Object value = e.getValue().getValue();
            if (value instanceof Number n) {
                String name = sanitize(e.getKey());
                header(out, name, "gauge");
                sample(out, name, "", n.doubleValue());
            } else if (value instanceof Boolean b) {
                String name = sanitize(e.getKey());
                header(out, name, "gauge");
                sample(out, name, "", b ? 1 : 0);
            }
        }
        for (Map.Entry<String, Counter> e : registry.getCounters().entrySet()) {
            String name = sanitize(e.getKey());
            header(out, name + "_total", "counter");
            sample(out, name + "_total", "", e.getValue().getCount());
        }
        for (Map.Entry<String, Meter> e : registry.getMeters().entrySet()) {
            String name = sanitize(e.getKey());
            header(out, name + "_total", "counter");
            sample(out, name + "_total", "", e.getValue().getCount());
        }
        for (Map.Entry<String, Timer> e : registry.getTimers().entrySet()) {
            String name = sanitize(e.getKey()) + "_seconds";
            summary(out, name, e.getValue().getSnapshot(), e.getValue().getCount(), 1 / NANOS_PER_SECOND);
        }
        for (Map.Entry<String, Histogram> e : registry.getHistograms().entrySet()) {
            summary(out, sanitize(e.getKey()), e.getValue().getSnapshot(), e.getValue().getCount(), 1);
        }
        return out.toString();
    }

    static String sanitize(String name) {
        StringBuilder s = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
                    || (i > 0 && c >= '0' && c <= '9');
            s.append(ok ? c : '_');
        }
        return s.toString();
    }

    private static void summary(StringBuilder out, String name, Snapshot snapshot, long count, double scale) {
        header(out, name, "summary");
        for (double q : QUANTILES) {
            sample(out, name, "{quantile=\"" + q + "\"}", snapshot.getValue(q) * scale);
        }
        // Dropwizard keeps no exact sum; mean × count over the reservoir is the closest honest figure.
        sample(out, name + "_sum", "", snapshot.getMean() * scale * count);
        sample(out, name + "_count", "", count);
    }

    private static void header(StringBuilder out, String name, String type) {
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static void sample(StringBuilder out, String name, String labels, double value) {
        out.append(name).append(labels).append(' ');
        if (value == Math.rint(value) && !Double.isInfinite(value) && Math.abs(value) < 1e15) {
            out.append((long) value);
        } else {
            out.append(value);
        }
        out.append('\n');
    }
}
