package dev.rolloutfleet.ops;

/** A one-line text progress bar, e.g. {@code [#########-----------]  45%}. */
final class ProgressBar {

    private static final int WIDTH = 24;

    private ProgressBar() {}

    static String of(long done, long total) {
        double fraction = total <= 0 ? 1 : Math.min(1, (double) done / total);
        int filled = (int) Math.round(fraction * WIDTH);
        return "[" + "#".repeat(filled) + "-".repeat(WIDTH - filled) + "] " + String.format(java.util.Locale.ROOT, "%3d%%",
                Math.round(fraction * 100));
    }
}
