package io.github.ratelimit.readme;

/**
 * Knows each customer's plan, for the per-plan example.
 */
public interface CustomerDirectory {

	/**
	 * Returns the plan of the customer an API key belongs to.
	 * @param apiKey the key
	 * @return the plan's name, e.g. {@code free}
	 */
	String planOf(String apiKey);

}
