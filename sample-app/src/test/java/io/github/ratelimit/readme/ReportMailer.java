package io.github.ratelimit.readme;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

@Component
public class ReportMailer {

	private final Outbox outbox;

	public ReportMailer(Outbox outbox) {
		this.outbox = outbox;
	}

	// Every instance ticks every 10 seconds, but the mails go out once per clock
	// minute across all of them (a fixed window: SLIDING_LOG for a minute between
	// sends); a rejected tick is skipped quietly (one DEBUG line), not an error.
	@Scheduled(fixedRate = 10_000)
	@RateLimited(bucket = "report-mailer", limit = 1, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
	public void sendReports() {
		this.outbox.sendDailyReports();
	}

}
