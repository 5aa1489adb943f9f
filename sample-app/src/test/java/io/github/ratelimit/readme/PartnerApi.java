package io.github.ratelimit.readme;

/**
 * A partner's API, for the no-web-stack example.
 */
public interface PartnerApi {

	/**
	 * Sends one record.
	 * @param record the record
	 */
	void push(String record);

}
