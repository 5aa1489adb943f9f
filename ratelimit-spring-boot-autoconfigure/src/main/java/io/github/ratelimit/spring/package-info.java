/**
 * What the aspect, the filter, the endpoint and the metrics share: bucket definitions
 * with their precedence rules, and the service that makes and reports decisions.
 */
@NullMarked
package io.github.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
