package dev.rolloutfleet.common.wire;

/** The wire contract's version. Readers accept values up to {@link #CURRENT}; writers stamp it. */
public final class SchemaVersion {

    /** Version written on every value this build produces. */
    public static final int CURRENT = 1;

    private SchemaVersion() {}
}
