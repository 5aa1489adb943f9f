package io.github.ratelimit.failover;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.LastHeard.Heard;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link LastHeard} keeps of the decisions callers note, in whatever order they note
 * them.
 */
class LastHeardTests {

	private static final LimitSpec LOG = LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG);

	private static final LimitSpec BUCKET = LimitSpec.of(20, "20s", Algorithm.TOKEN_BUCKET);

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	private final LastHeard heard = new LastHeard(10, this.nanos::get);

	private long[] used(LimitSpec spec) {
		Heard heard = this.heard.get("b", "k", List.of(spec));
		assertThat(heard).isNotNull();
		return heard.usedAt(this.nanos.get());
	}

	private void record(LimitSpec spec, long remaining) {
		this.heard.record("b", "k", List.of(spec), Decision.allowed(spec, remaining, 3_600_000_000L, 0));
	}

	@Test
	void aDecisionNotedLateDoesNotHideALaterOneOfTheStore() {
		record(LOG, 15);
		record(LOG, 19);
		assertThat(used(LOG)).containsExactly(5);
	}

	@Test
	void theLatestDecisionWinsWhenItCountsAsMuch() {
		record(LOG, 19);
		record(LOG, 15);
		assertThat(used(LOG)).containsExactly(5);
	}

	@Test
	void permitsThatCameBackLetALaterDecisionTellLessUsage() {
		record(BUCKET, 0);
		this.nanos.addAndGet(TimeUnit.SECONDS.toNanos(10));
		record(BUCKET, 9);
		assertThat(used(BUCKET)).as("10 came back in 10 s; the store's 11 used is the truth").containsExactly(11);
	}

	@Test
	void aDecisionUnderOtherLimitsReplacesWhatWasHeard() {
		record(LOG, 0);
		record(BUCKET, 19);
		assertThat(used(BUCKET)).containsExactly(1);
		assertThat(this.heard.get("b", "k", List.of(LOG))).isNull();
	}

}
