package dev.rolloutfleet.ops;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProgressBarTest {

    @Test
    void theBarFillsInProportionAndNeverOverflows() {
        assertThat(ProgressBar.of(0, 10)).isEqualTo("[------------------------]   0%");
        assertThat(ProgressBar.of(5, 10)).isEqualTo("[############------------]  50%");
        assertThat(ProgressBar.of(10, 10)).isEqualTo("[########################] 100%");
        assertThat(ProgressBar.of(12, 10)).as("more done than asked (a re-run)").isEqualTo(ProgressBar.of(10, 10));
        assertThat(ProgressBar.of(0, 0)).as("nothing to do is done").endsWith("100%");
    }
}
