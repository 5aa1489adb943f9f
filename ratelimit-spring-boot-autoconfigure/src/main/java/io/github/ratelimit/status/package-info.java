/**
 * How the rate limit store stands, as the endpoint, the metrics and the health indicator
 * report it: which store decides, whether the failure mode applies, and which mode that
 * is.
 */
@NullMarked
package io.github.ratelimit.status;

import org.jspecify.annotations.NullMarked;
