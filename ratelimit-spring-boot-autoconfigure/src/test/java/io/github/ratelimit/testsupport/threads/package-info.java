/**
 * What a test that failed by a timeout prints: where every thread stood.
 */
@NullMarked
package io.github.ratelimit.testsupport.threads;

import org.jspecify.annotations.NullMarked;
