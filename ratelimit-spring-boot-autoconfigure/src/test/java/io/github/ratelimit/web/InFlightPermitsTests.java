package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.Holders;
import io.github.ratelimit.concurrency.InMemoryConcurrencyStore;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link InFlightPermits}: a request holds every permit of its rules or none.
 */
class InFlightPermitsTests {

	private final LeaseRenewer renewer = new LeaseRenewer();

	private final InMemoryConcurrencyStore store = new InMemoryConcurrencyStore();

	private final ConcurrencyLimiter two = limiter("two", 2, this.store, OnStoreFailure.LOCAL);

	private final ConcurrencyLimiter one = limiter("one", 1, this.store, OnStoreFailure.LOCAL);

	@AfterEach
	void stopRenewer() {
		this.renewer.close();
	}

	@Test
	void holdsAPermitOfEveryRuleUntilReleasedOnce() {
		InFlightPermits permits = InFlightPermits.acquire(claims(this.two, this.one));
		assertThat(permits.granted()).isTrue();
		assertThat(permits.held()).hasSize(2);
		assertThat(this.store.holders("two", "k").count()).isEqualTo(1);
		assertThat(this.store.holders("one", "k").count()).isEqualTo(1);
		permits.release();
		permits.release();
		assertThat(this.store.holders("two", "k")).isEqualTo(Holders.NONE);
		assertThat(this.store.holders("one", "k")).isEqualTo(Holders.NONE);
	}

	@Test
	void aRefusalReleasesThePermitsTakenBeforeIt() {
		InFlightPermits first = InFlightPermits.acquire(claims(this.one));
		InFlightPermits second = InFlightPermits.acquire(claims(this.two, this.one));
		assertThat(second.granted()).isFalse();
		assertThat(second.rejection()).isNotNull();
		assertThat(second.rejection().bucket()).isEqualTo("one");
		assertThat(second.held()).isEmpty();
		assertThat(this.store.holders("two", "k")).as("the first rule's permit, given back").isEqualTo(Holders.NONE);
		first.release();
	}

	@Test
	void aStoreThatCannotAnswerWhileClosedReleasesThePermitsTakenBeforeAndThrows() {
		ConcurrencyLimiter failing = limiter("failing", 3, new UnavailableStore(), OnStoreFailure.REJECT);
		assertThatExceptionOfType(StoreUnavailableException.class)
			.isThrownBy(() -> InFlightPermits.acquire(claims(this.two, failing)));
		assertThat(this.store.holders("two", "k")).isEqualTo(Holders.NONE);
	}

	@Test
	void noClaimsHoldNothing() {
		assertThat(InFlightPermits.acquire(List.of())).isSameAs(InFlightPermits.NONE);
		assertThat(InFlightPermits.NONE.granted()).isTrue();
	}

	@Test
	void aRuleWithBothLimitsTakesItsPermitWithItsDecision() {
		InMemoryRateLimitStore both = InMemoryRateLimitStore.create();
		Acquirer acquirer = Acquirer.builder(both).build();
		ConcurrencyLimiter reports = limiter("reports", 1, both, OnStoreFailure.LOCAL);
		Bucket twoAnHour = Bucket.of("reports", LimitSpec.of(2, "1h", Algorithm.FIXED_WINDOW));
		InFlightPermits first = InFlightPermits.acquire(new InFlightPermits.Claim(reports, "k"),
				PermitRequest.of(twoAnHour, "k", 1), acquirer);
		assertThat(first.granted()).isTrue();
		assertThat(first.held()).hasSize(1);
		assertThat(first.acquisition().granted()).isTrue();
		InFlightPermits busy = InFlightPermits.acquire(new InFlightPermits.Claim(reports, "k"),
				PermitRequest.of(twoAnHour, "k", 1), acquirer);
		assertThat(busy.granted()).isFalse();
		assertThat(busy.acquisition()).as("not decided").isNull();
		first.release();
		InFlightPermits second = InFlightPermits.acquire(new InFlightPermits.Claim(reports, "k"),
				PermitRequest.of(twoAnHour, "k", 1), acquirer);
		second.release();
		InFlightPermits limited = InFlightPermits.acquire(new InFlightPermits.Claim(reports, "k"),
				PermitRequest.of(twoAnHour, "k", 1), acquirer);
		assertThat(limited.granted()).as("no concurrency limit refused it").isTrue();
		assertThat(limited.held()).isEmpty();
		assertThat(limited.acquisition().granted()).isFalse();
		assertThat(both.holders("reports", "k")).isEqualTo(Holders.NONE);
	}

	private ConcurrencyLimiter limiter(String bucket, int permits, ConcurrencyStore store, OnStoreFailure failure) {
		return new ConcurrencyLimiter(store, bucket, new ConcurrencyLimit(permits, Duration.ofSeconds(30)),
				this.renewer, List.of(), failure);
	}

	private static List<InFlightPermits.Claim> claims(ConcurrencyLimiter... limiters) {
		return List.of(limiters).stream().map((limiter) -> new InFlightPermits.Claim(limiter, "k")).toList();
	}

	/** A store whose server is gone. */
	private static final class UnavailableStore implements ConcurrencyStore {

		@Override
		public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
			throw new StoreUnavailableException("down", new IllegalStateException("connection refused"));
		}

		@Override
		public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
			throw new StoreUnavailableException("down", new IllegalStateException("connection refused"));
		}

		@Override
		public boolean release(String bucket, String key, String holder) {
			throw new StoreUnavailableException("down", new IllegalStateException("connection refused"));
		}

		@Override
		public Holders holders(String bucket, String key) {
			throw new StoreUnavailableException("down", new IllegalStateException("connection refused"));
		}

		@Override
		public int releaseAll(String bucket, String key) {
			throw new StoreUnavailableException("down", new IllegalStateException("connection refused"));
		}

	}

}
