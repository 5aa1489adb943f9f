package io.github.ratelimit.failover;

import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.junit.jupiter.api.Test;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.contains;
import static org.mockito.ArgumentMatchers.same;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

class ThrottledFailureLogTests {

	private final Log log = mock(Log.class);

	@Test
	void theFirstFailureIsLoggedWithItsCauseAndTheRestAreSuppressedWithinTheInterval() {
		ThrottledFailureLog failures = new ThrottledFailureLog(this.log, 1, TimeUnit.HOURS);
		RuntimeException cause = new RuntimeException("Redis did not answer");
		for (int i = 0; i < 1000; i++) {
			failures.failure("Redis failed", cause);
		}
		verify(this.log, times(1)).warn(contains("Redis did not answer"), same(cause));
		verify(this.log, never()).warn(anyString());
	}

	@Test
	void afterTheIntervalOneSummaryLineCountsTheFailuresSinceTheLastLine() throws Exception {
		ThrottledFailureLog failures = new ThrottledFailureLog(this.log, 50, TimeUnit.MILLISECONDS);
		RuntimeException cause = new RuntimeException("down");
		failures.failure("Redis failed", cause);
		for (int i = 0; i < 9; i++) {
			failures.failure("Redis failed", cause);
		}
		Thread.sleep(80);
		failures.failure("Redis failed", cause);
		verify(this.log, times(1)).warn(anyString(), any(Throwable.class));
		verify(this.log, times(1)).warn(contains("10 failures since the last report"));
	}

}
