package io.github.ratelimit.algorithm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SlidingLogState} shares one buffer between the states derived from one another:
 * whatever order states are derived, dropped and derived again in, each reads as a plain
 * list of admission times would.
 */
class SlidingLogStateTests {

	private static final Duration WINDOW = Duration.ofMillis(50);

	@RepeatedTest(10)
	void everyStateReadsAsItsOwnListWhateverItsSiblingsDid(RepetitionInfo repetition) {
		Random random = new Random(repetition.getCurrentRepetition());
		List<LimitSpec> specs = List.of(LimitSpec.of(20, WINDOW, Algorithm.SLIDING_LOG),
				LimitSpec.of(7, WINDOW, Algorithm.SLIDING_LOG), LimitSpec.of(300, WINDOW, Algorithm.SLIDING_LOG));
		// States still in use, each with the list it must read as.
		List<LimitState> states = new ArrayList<>(List.of(LimitState.fresh(specs.get(0))));
		List<List<Long>> models = new ArrayList<>(List.of(new ArrayList<>()));
		long now = 1_000_000;
		for (int step = 0; step < 20_000; step++) {
			now += switch (random.nextInt(4)) {
				case 0 -> 0;
				case 1 -> random.nextInt(60_000);
				default -> random.nextInt(2_000);
			};
			int i = random.nextInt(states.size());
			LimitState state = states.get(i);
			List<Long> model = new ArrayList<>(models.get(i));
			LimitSpec spec = specs.get((random.nextInt(10) == 0) ? random.nextInt(specs.size()) : 0);
			long cost = 1 + random.nextInt(random.nextBoolean() ? 2 : 12);
			String as = spec + " at step " + step;
			LimitState next;
			switch (random.nextInt(8)) {
				case 0 -> {
					next = state.refund(spec, now, cost);
					evict(model, now - spec.windowMicros());
					for (long c = 0; c < cost && !model.isEmpty(); c++) {
						model.remove(model.size() - 1);
					}
				}
				case 1 -> {
					Transition peek = state.peek(spec, now);
					assertThat(peek.decision()).as(as).hasToString(peek(model, spec, now).toString());
					next = peek.next();
				}
				default -> {
					Transition taken = state.acquire(spec, now, cost, Long.MAX_VALUE);
					assertThat(taken.decision()).as(as).hasToString(decide(model, spec, now, cost).toString());
					if (random.nextInt(4) == 0) {
						// Another limit rejected the request: the state before stays.
						next = taken.kept();
						model = models.get(i);
					}
					else {
						next = taken.next();
					}
				}
			}
			if (model.isEmpty()) {
				// Entries left the window, whether the state dropped them yet or not.
				assertThat(next.expiresAtMicros()).as(as).isLessThanOrEqualTo(now);
			}
			else {
				assertThat(next.expiresAtMicros()).as(as)
					.isEqualTo(model.get(model.size() - 1) + WINDOW.toNanos() / 1000);
			}
			if (random.nextInt(3) == 0 && states.size() < 6) {
				// Both the state before and the one after stay in use.
				states.add(next);
				models.add(model);
			}
			else {
				states.set(i, next);
				models.set(i, model);
			}
			if (states.size() > 1 && random.nextInt(5) == 0) {
				int dropped = random.nextInt(states.size());
				states.remove(dropped);
				models.remove(dropped);
			}
		}
	}

	private static Decision decide(List<Long> model, LimitSpec spec, long now, long cost) {
		evict(model, now - spec.windowMicros());
		int size = model.size();
		if (cost <= spec.limit() - size) {
			for (long c = 0; c < cost; c++) {
				model.add(now);
			}
			return Decision.allowed(spec, spec.limit() - size - cost, spec.windowMicros(), 0);
		}
		long retryAfter = (cost > spec.limit()) ? Decision.NEVER
				: model.get((int) (size + cost - spec.limit()) - 1) + spec.windowMicros() - now;
		return Decision.rejected(spec, spec.limit() - size, resetAfter(model, spec, now), retryAfter);
	}

	private static Decision peek(List<Long> model, LimitSpec spec, long now) {
		evict(model, now - spec.windowMicros());
		if (model.size() >= spec.limit()) {
			return decide(model, spec, now, 1);
		}
		return Decision.allowed(spec, spec.limit() - model.size(), resetAfter(model, spec, now), 0);
	}

	private static long resetAfter(List<Long> model, LimitSpec spec, long now) {
		return model.isEmpty() ? 0 : model.get(model.size() - 1) + spec.windowMicros() - now;
	}

	private static void evict(List<Long> model, long threshold) {
		while (!model.isEmpty() && model.get(0) <= threshold) {
			model.remove(0);
		}
	}

}
