package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads an API key from the worker's environment, by the variable name a request's config gives
 * ({@code api_key_env}), so keys never travel in requests. The value is never logged or put in a
 * message; only the variable's name is.
 */
public final class ApiKeys {

    private ApiKeys() {}

    /**
     * @param config the config holding {@code api_key_env}
     * @param where how to name that setting in an error, e.g. {@code policy.config}
     * @return the key, or null when no variable is named
     * @throws IllegalArgumentException when the named variable is not set on this worker
     */
    public static String fromEnvironment(JsonNode config, String where) {
        String variable = config.path("api_key_env").asText("");
        if (variable.isBlank()) {
            return null;
        }
        String key = System.getenv(variable);
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException(where + ".api_key_env names " + variable + ", which is not set on this worker");
        }
        return key;
    }
}
