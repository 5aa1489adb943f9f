package io.github.ratelimit.bucket;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyObserver;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;

/**
 * The concurrency limiters of the application, by bucket: each made once, from what
 * configuration sets ({@code ratelimit.concurrency.<bucket>}) over what the code sets (an
 * annotation's permits and lease). The annotation and the endpoint find them here.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class ConcurrencyLimiters {

	private final ConcurrencyStore store;

	private final LeaseRenewer renewer;

	private final List<ConcurrencyObserver> observers;

	private final Map<String, Settings> configured;

	private final OnStoreFailure onStoreFailure;

	private final IntSupplier instances;

	private final Map<String, ConcurrencyLimiter> limiters = new ConcurrentHashMap<>();

	/**
	 * Creates the registry.
	 * @param store where permits are kept
	 * @param renewer renews held leases
	 * @param observers told of every acquire and release
	 * @param configured what configuration sets per bucket
	 * @param onStoreFailure what a request does while the store cannot answer
	 */
	public ConcurrencyLimiters(ConcurrencyStore store, LeaseRenewer renewer, List<ConcurrencyObserver> observers,
			Map<String, Settings> configured, OnStoreFailure onStoreFailure) {
		this(store, renewer, observers, configured, onStoreFailure, () -> 1);
	}

	/**
	 * Creates the registry.
	 * @param store where permits are kept
	 * @param renewer renews held leases
	 * @param observers told of every acquire and release
	 * @param configured what configuration sets per bucket
	 * @param onStoreFailure what a request does while the store cannot answer
	 * @param instances how many instances share the store now, whose share of the permits
	 * each counts on its own while the store cannot answer
	 */
	public ConcurrencyLimiters(ConcurrencyStore store, LeaseRenewer renewer, List<ConcurrencyObserver> observers,
			Map<String, Settings> configured, OnStoreFailure onStoreFailure, IntSupplier instances) {
		this.instances = instances;
		this.onStoreFailure = onStoreFailure;
		this.store = store;
		this.renewer = renewer;
		this.observers = List.copyOf(observers);
		this.configured = Map.copyOf(configured);
	}

	/**
	 * Returns the limiter of a bucket, made on first use from configuration over
	 * {@code code}.
	 * @param bucket the bucket name
	 * @param code what the code sets (the annotation), or {@link Settings#NONE}
	 * @param origin where the code sets it, for errors
	 * @return the limiter
	 * @throws InvalidConcurrencyLimitException when neither sets the permits, or a value
	 * is out of range, naming the property
	 */
	public ConcurrencyLimiter get(String bucket, Settings code, String origin) {
		return get(bucket, code, Origin.of(origin));
	}

	/**
	 * Returns the limiter of a bucket, made on first use from configuration over
	 * {@code code}.
	 * @param bucket the bucket name
	 * @param code what the code or a rule sets, or {@link Settings#NONE}
	 * @param origin where it is set, and what its fields are called there, for errors
	 * @return the limiter
	 * @throws InvalidConcurrencyLimitException when neither sets the permits, or a value
	 * is out of range, naming the property
	 */
	public ConcurrencyLimiter get(String bucket, Settings code, Origin origin) {
		ConcurrencyLimiter limiter = this.limiters.get(bucket);
		if (limiter != null) {
			return limiter;
		}
		return this.limiters.computeIfAbsent(bucket,
				(name) -> new ConcurrencyLimiter(this.store, name,
						limit(name, this.configured.getOrDefault(name, Settings.NONE), code, origin), this.renewer,
						this.observers, this.onStoreFailure, this.instances));
	}

	/**
	 * Returns the limiter of a bucket that exists (configured, or used by the code).
	 * @param bucket the bucket name
	 * @return the limiter, or {@code null}
	 */
	public @Nullable ConcurrencyLimiter find(String bucket) {
		ConcurrencyLimiter limiter = this.limiters.get(bucket);
		if (limiter == null && this.configured.containsKey(bucket)) {
			return get(bucket, Settings.NONE, Origin.of("ratelimit.concurrency." + bucket));
		}
		return limiter;
	}

	/**
	 * Returns every bucket known: configured or used so far.
	 * @return the limiters, by bucket
	 */
	public Map<String, ConcurrencyLimiter> all() {
		for (String bucket : this.configured.keySet()) {
			find(bucket);
		}
		return Map.copyOf(this.limiters);
	}

	/**
	 * Makes the limit of configuration over code; an error names where the value at fault
	 * was set: the configuration property, or the code's or rule's own field.
	 */
	private static ConcurrencyLimit limit(String bucket, Settings configured, Settings code, Origin origin) {
		String property = "ratelimit.concurrency." + bucket;
		Settings settings = configured.orElse(code);
		if (settings.permits() == null) {
			throw new InvalidConcurrencyLimitException(property + ".permits",
					"must be set (neither " + origin.where() + " nor configuration sets it)",
					"Set " + property + ".permits, e.g. " + property + ".permits=10, or " + origin.permits() + ".");
		}
		Duration lease = (settings.lease() != null) ? settings.lease() : ConcurrencyLimit.DEFAULT_LEASE;
		try {
			return new ConcurrencyLimit(settings.permits(), lease);
		}
		catch (IllegalArgumentException ex) {
			boolean leaseAtFault = String.valueOf(ex.getMessage()).startsWith("lease");
			boolean configuredHere = (leaseAtFault ? configured.lease() : configured.permits()) != null;
			String where = configuredHere ? property + "." + (leaseAtFault ? "lease" : "permits")
					: (leaseAtFault ? origin.lease() : origin.permits());
			throw new InvalidConcurrencyLimitException(where,
					String.valueOf(ex.getMessage()).substring((leaseAtFault ? "lease" : "permits").length() + 1),
					"Set " + where + " within range, e.g. " + (leaseAtFault ? "30s" : "10") + ".");
		}
	}

	/**
	 * Where code or a rule sets a concurrency limit, and what its two fields are called
	 * there, for errors that name them.
	 *
	 * @param where the place, e.g. {@code @ConcurrencyLimited on Exports.run} or
	 * {@code ratelimit.filter.rules[0]}
	 * @param permits the permits field there, e.g. {@code permits on @ConcurrencyLimited
	 * on Exports.run}
	 * @param lease the lease field there
	 */
	public record Origin(String where, String permits, String lease) {

		/**
		 * Returns the origin of an annotation or the code, whose fields are
		 * {@code permits} and {@code lease}.
		 * @param where the place
		 * @return the origin
		 */
		public static Origin of(String where) {
			return new Origin(where, "permits on " + where, "lease on " + where);
		}

	}

	/**
	 * What one layer says about a concurrency limit; {@code null} is "not set here".
	 *
	 * @param permits the calls in flight per key, or {@code null}
	 * @param lease the lease, or {@code null}
	 */
	public record Settings(@Nullable Integer permits, @Nullable Duration lease) {

		/** Settings that set nothing. */
		public static final Settings NONE = new Settings(null, null);

		/**
		 * Returns these settings with every unset field taken from {@code fallback}.
		 * @param fallback the lower-precedence settings
		 * @return the merged settings
		 */
		public Settings orElse(Settings fallback) {
			Objects.requireNonNull(fallback, "'fallback' must not be null");
			return new Settings((this.permits != null) ? this.permits : fallback.permits,
					(this.lease != null) ? this.lease : fallback.lease);
		}

	}

}
