/**
 * The seven algorithms as meters: state plus the decision logic on it.
 */
@NullMarked
package io.github.ratelimit.algorithm;

import org.jspecify.annotations.NullMarked;
