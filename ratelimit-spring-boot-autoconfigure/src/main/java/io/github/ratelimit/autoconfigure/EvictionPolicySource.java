package io.github.ratelimit.autoconfigure;

/**
 * Tells the store server's eviction policy, for the health indicator and the startup
 * summary. An interface of its own, free of Spring Data Redis's types, so that the
 * configurations that show it load without Redis on the class path.
 */
interface EvictionPolicySource {

	/** The policy when the server did not tell it (yet). */
	String UNKNOWN = "unknown";

	/**
	 * Returns the server's {@code maxmemory-policy}, or {@link #UNKNOWN}.
	 * @return the policy
	 */
	String policy();

	/**
	 * Whether a policy may evict limit keys.
	 * @param policy a {@code maxmemory-policy}, or several joined by commas
	 * @return {@code true} for {@code allkeys-*} and {@code volatile-*} (every limit key
	 * has a time-to-live)
	 */
	static boolean evicts(String policy) {
		for (String one : policy.split(",")) {
			if (one.startsWith("allkeys-") || one.startsWith("volatile-")) {
				return true;
			}
		}
		return false;
	}

}
