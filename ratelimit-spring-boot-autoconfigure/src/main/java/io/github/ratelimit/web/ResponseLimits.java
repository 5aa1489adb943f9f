package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;

/**
 * The decisions one response advertises in its limit headers, collected while its request
 * is handled: one per bucket and key, the latest for each, at most
 * {@link RateLimitHeaders#MAX_DECISIONS}; a bucket's concurrency limit apart from its
 * rate limits. A request stack keeps one per request (the servlet filter in a request
 * attribute) and hands it to {@link RateLimitHeaders}. Thread-safe: an asynchronous
 * handler may report while the request thread does.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ResponseLimits {

	private final List<Entry> entries = new ArrayList<>(2);

	/**
	 * Merges a decision into the response's decisions.
	 * @param bucket the bucket name
	 * @param key the key, or {@code null} for a rejection known only from its exception
	 * @param decision the decision
	 * @return a snapshot of the decisions when they changed, or {@code null} when not
	 */
	synchronized @Nullable List<Entry> merge(String bucket, @Nullable String key, Decision decision) {
		Entry entry = new Entry(bucket, key, decision);
		for (int i = 0; i < this.entries.size(); i++) {
			Entry existing = this.entries.get(i);
			if (existing.decision() == decision) {
				return null;
			}
			if (!existing.bucket().equals(bucket) || existing.decision().isConcurrency() != decision.isConcurrency()) {
				// A bucket's concurrency limit is a counter apart from its rate limits.
				continue;
			}
			if (key == null && !existing.decision().allowed()) {
				// The rejection behind an exception, already reported by the observer.
				return null;
			}
			if (key != null && key.equals(existing.key())) {
				// The same counter, decided again: its later state is the current one.
				this.entries.set(i, entry);
				return List.copyOf(this.entries);
			}
		}
		if (this.entries.size() >= RateLimitHeaders.MAX_DECISIONS) {
			return null;
		}
		this.entries.add(entry);
		return List.copyOf(this.entries);
	}

	/**
	 * One decision of the response.
	 *
	 * @param bucket the bucket name
	 * @param key the key, or {@code null} when unknown
	 * @param decision the decision
	 */
	record Entry(String bucket, @Nullable String key, Decision decision) {
	}

}
