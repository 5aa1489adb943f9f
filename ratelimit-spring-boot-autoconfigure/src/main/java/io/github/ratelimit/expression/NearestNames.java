package io.github.ratelimit.expression;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Suggests what a misspelt name meant, for errors and warnings that name the fix: a
 * property an expression reads of the request, a configuration key.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class NearestNames {

	private NearestNames() {
	}

	/**
	 * Returns the names closest to a misspelt one: those at the smallest edit distance
	 * (at most three of them), if within a third of its length (at least 2), or else
	 * those that contain it. Case is ignored within that bound.
	 * @param name the misspelt name
	 * @param offered the names there are
	 * @return the suggestions, nearest first; empty when none is close
	 */
	public static List<String> of(String name, Collection<String> offered) {
		int bound = Math.max(2, name.length() / 3);
		List<String> close = new ArrayList<>();
		for (String candidate : offered) {
			if (distance(name.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT)) <= bound) {
				close.add(candidate);
			}
		}
		if (close.isEmpty()) {
			for (String candidate : offered) {
				if (candidate.toLowerCase(Locale.ROOT).contains(name.toLowerCase(Locale.ROOT))) {
					close.add(candidate);
				}
			}
		}
		close.sort(Comparator.comparingInt((String candidate) -> distance(name, candidate))
			.thenComparing(Comparator.naturalOrder()));
		// The nearest only: remoteAddr for remoteAdr, not also remotePort.
		List<String> nearest = close.stream()
			.filter((candidate) -> distance(name, candidate) == distance(name, close.get(0)))
			.toList();
		return nearest.subList(0, Math.min(3, nearest.size()));
	}

	private static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

}
