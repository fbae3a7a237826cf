package dev.rolloutfleet.collector.build;

/** Why a rebuilt sample must not be trained on as it is; trainers match on these strings. */
public final class MaskReason {

    /** The rollout participated in capture but no entries were found. */
    public static final String MISSING = "missing";
    /** An entry breaks the contract, e.g. log-probs length differs from the generation's. */
    public static final String MALFORMED = "malformed";
    /** The evidence is known to be incomplete: a failed capture write, a late entry, a lagging partition. */
    public static final String INCOMPLETE = "incomplete";
    /** A call's parent cannot be told apart from another with the identical sequence. */
    public static final String AMBIGUOUS = "ambiguous";
    /** More than one call starts a conversation. */
    public static final String MULTI_ROOT = "multi_root";
    /** The calls branch into more than one chain. */
    public static final String MULTI_CHAIN = "multi_chain";
    /** No call generated any token. */
    public static final String EMPTY_TOKENS = "empty_tokens";

    private MaskReason() {}
}
