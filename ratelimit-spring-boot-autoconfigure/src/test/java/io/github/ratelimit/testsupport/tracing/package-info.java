/**
 * Spans a test tracer recorded, drawn as the tree a tracing backend would show.
 */
@NullMarked
package io.github.ratelimit.testsupport.tracing;

import org.jspecify.annotations.NullMarked;
