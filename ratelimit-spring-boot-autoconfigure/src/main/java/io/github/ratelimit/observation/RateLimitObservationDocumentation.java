package io.github.ratelimit.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of rate limiting, their names and key values.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum RateLimitObservationDocumentation implements ObservationDocumentation {

	/**
	 * One request's decision by one bucket, from its first store call to its final result
	 * (waits for a permit included). Current while the store is called: the store's own
	 * spans (a Redis command) are its children.
	 */
	DECISION {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultRateLimitObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return DecisionKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return KeyNames.values();
		}

	},

	/**
	 * A wait for a permit: the store rejected the request, and its policy
	 * ({@code onLimit = WAIT}, {@code RateLimiter.acquire}) waits out the rejection
	 * before asking again. A child of the request's {@link #DECISION}.
	 */
	WAIT {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultRateLimitWaitObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return WaitKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return KeyNames.values();
		}

	};

	/**
	 * The low cardinality key names of {@link #DECISION}.
	 */
	public enum DecisionKeyNames implements KeyName {

		/** The bucket's name. */
		BUCKET {
			@Override
			public String asString() {
				return "bucket";
			}
		},

		/**
		 * The algorithm of the request's limits in kebab case ({@code token-bucket}); the
		 * distinct ones joined with {@code +} in the order of the limits when they
		 * differ.
		 */
		ALGORITHM {
			@Override
			public String asString() {
				return "algorithm";
			}
		},

		/**
		 * What became of the request: {@code allowed}, {@code waited}, {@code rejected},
		 * {@code shadow_rejected} or {@code error} (the store could not decide), as the
		 * {@code outcome} tag of {@code ratelimit.decisions}.
		 */
		OUTCOME {
			@Override
			public String asString() {
				return "outcome";
			}
		},

		/** The store's name ({@code redis}, {@code memory}). */
		STORE {
			@Override
			public String asString() {
				return "store";
			}
		},

		/**
		 * Whether the failure mode answered instead of the store: {@code true} for a
		 * decision of the fallback (or of {@code failure-mode: open}) and for an error,
		 * {@code false} otherwise.
		 */
		DEGRADED {
			@Override
			public String asString() {
				return "degraded";
			}
		}

	}

	/**
	 * The low cardinality key names of {@link #WAIT}.
	 */
	public enum WaitKeyNames implements KeyName {

		/** The bucket's name. */
		BUCKET {
			@Override
			public String asString() {
				return "bucket";
			}
		},

		/** As {@link DecisionKeyNames#ALGORITHM}. */
		ALGORITHM {
			@Override
			public String asString() {
				return "algorithm";
			}
		},

		/** The store's name. */
		STORE {
			@Override
			public String asString() {
				return "store";
			}
		}

	}

	/**
	 * The high cardinality key names of both observations, each added only when the user
	 * opts in.
	 */
	public enum KeyNames implements KeyName {

		/**
		 * The key within the bucket (a user, an IP address): user data, added only with
		 * {@code ratelimit.observations.include-key=true}.
		 */
		KEY {
			@Override
			public String asString() {
				return "key";
			}

			@Override
			public boolean isRequired() {
				return false;
			}
		}

	}

}
