package io.github.ratelimit.clientip;

import java.util.List;

/**
 * The headers of a request, as a request stack gives them to the
 * {@link ClientIpResolver}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface RequestHeaders {

	/**
	 * Returns every value of a header, in the order of the request's header lines.
	 * @param name the header's name, in any case
	 * @return the values, empty when the request has no such header
	 */
	List<String> values(String name);

}
