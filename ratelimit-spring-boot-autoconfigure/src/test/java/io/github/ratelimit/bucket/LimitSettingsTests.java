package io.github.ratelimit.bucket;

import java.time.Duration;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarUnit;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LimitSettings}: layers merged field by field, and a calendar window set or taken
 * back by a layer above.
 */
class LimitSettingsTests {

	private final LimitSettings file = new LimitSettings(Algorithm.FIXED_WINDOW, 1000L, Duration.ofMinutes(1), null,
			null, null, "month", "Europe/Berlin");

	@Test
	void aCalendarAndAZoneMakeACalendarWindow() {
		LimitSpec spec = this.file.toSpec();
		assertThat(spec.calendar()).isEqualTo(CalendarUnit.MONTH);
		assertThat(spec.zone()).isEqualTo(ZoneId.of("Europe/Berlin"));
	}

	@Test
	void aBlankCalendarAndZoneAboveTakeTheCalendarWindowBack() {
		LimitSettings commandLine = new LimitSettings(null, null, Duration.ofDays(1), null, null, null, "", " ");
		LimitSpec spec = commandLine.orElse(this.file).toSpec();
		assertThat(spec.calendar()).isNull();
		assertThat(spec.window()).isEqualTo(Duration.ofDays(1));
		assertThat(spec.zone()).isEqualTo(LimitSpec.UTC);
	}

}
