package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** What one environment step returned. */
public record EnvStep(ObjectNode observation, double reward, boolean done, boolean truncated, ObjectNode info) {}
