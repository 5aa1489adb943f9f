package io.github.ratelimit.bucket;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The contract every {@link LiveLimitsStore} meets: overrides kept as text per bucket, a
 * version that every change moves, and changes saved only if the bucket's override is
 * still the one that was read, so that concurrent changes of one bucket are all kept. A
 * store runs it by extending this class and implementing {@link #createStore()}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract class LiveLimitsStoreContractTests {

	private static final int WRITERS = 8;

	/** The store under test, new for every test. */
	protected LiveLimitsStore store;

	/**
	 * Creates the store under test, empty and seen by no other test.
	 * @return the store
	 */
	protected abstract LiveLimitsStore createStore();

	@BeforeEach
	void createEmptyStore() {
		this.store = createStore();
	}

	@Test
	void anEmptyStoreHasNoOverrideAndVersionZero() {
		assertThat(this.store.version()).isZero();
		assertThat(this.store.load()).isEmpty();
		assertThat(this.store.read("api")).isNull();
	}

	@Test
	void anOverrideIsSetWhereThereWasNoneAsExpected() {
		assertThat(this.store.compareAndSet("api", null, "f.limit=3")).isTrue();
		assertThat(this.store.version()).isEqualTo(1);
		assertThat(this.store.read("api")).isEqualTo("f.limit=3");
		assertThat(this.store.load()).containsExactly(Map.entry("api", "f.limit=3"));
		// Another change read before the first was saved finds an override: refused.
		assertThat(this.store.compareAndSet("api", null, "f.burst=5")).isFalse();
		assertThat(this.store.read("api")).isEqualTo("f.limit=3");
		assertThat(this.store.version()).isEqualTo(1);
	}

	@Test
	void anOverrideIsReplacedOnlyIfItIsStillTheOneRead() {
		this.store.compareAndSet("api", null, "f.limit=3");
		assertThat(this.store.compareAndSet("api", "f.limit=3", "f.limit=3&f.burst=5")).isTrue();
		assertThat(this.store.compareAndSet("api", "f.limit=3", "f.limit=3&f.window=1m")).isFalse();
		assertThat(this.store.read("api")).isEqualTo("f.limit=3&f.burst=5");
		assertThat(this.store.version()).isEqualTo(2);
	}

	@Test
	void anOverrideIsClearedOnlyIfItIsStillTheOneRead() {
		this.store.compareAndSet("api", null, "f.limit=3");
		assertThat(this.store.compareAndSet("api", "f.limit=4", null)).isFalse();
		assertThat(this.store.read("api")).isEqualTo("f.limit=3");
		assertThat(this.store.compareAndSet("api", "f.limit=3", null)).isTrue();
		assertThat(this.store.read("api")).isNull();
		assertThat(this.store.load()).isEmpty();
		assertThat(this.store.version()).isEqualTo(2);
	}

	@Test
	void clearingWhatIsNotThereMovesTheVersionOnly() {
		assertThat(this.store.compareAndSet("api", null, null)).isTrue();
		assertThat(this.store.load()).isEmpty();
		assertThat(this.store.version()).isEqualTo(1);
	}

	@Test
	void bucketsAreIndependent() {
		this.store.compareAndSet("api", null, "f.limit=3");
		this.store.compareAndSet("login", null, "f.window=1h");
		assertThat(this.store.compareAndSet("login", "f.window=1m", null)).isFalse();
		this.store.compareAndSet("api", "f.limit=3", null);
		assertThat(this.store.load()).containsExactly(Map.entry("login", "f.window=1h"));
		assertThat(this.store.version()).isEqualTo(3);
	}

	@Test
	void theTextIsKeptAsWritten() {
		String text = "by=J%C3%B6rg+%7Bops%7D&at=2026-11-23T12%3A00%3A00Z&f.window=1m";
		this.store.compareAndSet("api", null, text);
		assertThat(this.store.read("api")).isEqualTo(text);
		assertThat(this.store.compareAndSet("api", text, text + "&f.limit=3")).isTrue();
	}

	@Test
	void anEmptyOverrideIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.compareAndSet("api", null, ""))
			.withMessageContaining("'api'");
		assertThat(this.store.version()).isZero();
	}

	@Test
	void concurrentChangesOfOneBucketAreAllKept() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(WRITERS);
		try {
			CyclicBarrier start = new CyclicBarrier(WRITERS);
			List<Future<?>> writers = new ArrayList<>();
			for (int i = 0; i < WRITERS; i++) {
				String setting = "f.s" + i + "=" + i;
				writers.add(threads.submit(() -> {
					start.await();
					// What a caller does: read, merge, save if still what was read.
					String read;
					do {
						read = this.store.read("api");
					}
					while (!this.store.compareAndSet("api", read, (read != null) ? read + "&" + setting : setting));
					return null;
				}));
			}
			for (Future<?> writer : writers) {
				writer.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
		List<String> settings = Arrays.asList(this.store.read("api").split("&"));
		assertThat(settings).hasSize(WRITERS);
		for (int i = 0; i < WRITERS; i++) {
			assertThat(settings).contains("f.s" + i + "=" + i);
		}
		assertThat(this.store.version()).isEqualTo(WRITERS);
	}

}
