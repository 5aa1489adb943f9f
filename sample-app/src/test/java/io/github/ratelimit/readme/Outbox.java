package io.github.ratelimit.readme;

/**
 * Sends mail, for the scheduled job example.
 */
public interface Outbox {

	/**
	 * Sends the daily reports.
	 */
	void sendDailyReports();

}
