package io.github.ratelimit.algorithm;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A meter that claims {@link Meter#isDryRunReadOnly()} never writes on a dry run: the
 * in-memory store runs such dry runs without a lock.
 */
class MeterDryRunTests {

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void dryRunsOfReadOnlyMetersLeaveEveryFieldAsItWas(Algorithm algorithm) throws Exception {
		LimitSpec spec = LimitSpec.of(5, Duration.ofSeconds(1), algorithm);
		Meter meter = Meter.create(spec);
		Random random = new Random(algorithm.ordinal());
		long now = 1_800_000_000_000_000L;
		boolean wrote = false;
		for (int step = 0; step < 2000; step++) {
			now += random.nextInt(300_000);
			List<Object> before = fields(meter);
			meter.tryAcquire(spec, now, 1 + random.nextInt(3), random.nextInt(500_000), false);
			wrote |= !fields(meter).equals(before);
			if (meter.isDryRunReadOnly()) {
				assertThat(fields(meter)).as("%s at step %d", algorithm, step).isEqualTo(before);
			}
			meter.tryAcquire(spec, now, 1, Long.MAX_VALUE, true);
		}
		assertThat(meter.isDryRunReadOnly()).as("a meter whose dry runs never wrote should say so").isEqualTo(!wrote);
	}

	private static List<Object> fields(Meter meter) throws IllegalAccessException {
		List<Object> values = new ArrayList<>();
		for (Field field : meter.getClass().getDeclaredFields()) {
			if (Modifier.isStatic(field.getModifiers())) {
				continue;
			}
			field.setAccessible(true);
			Object value = field.get(meter);
			values.add((value instanceof long[] array) ? Arrays.toString(array) : value);
		}
		return values;
	}

}
