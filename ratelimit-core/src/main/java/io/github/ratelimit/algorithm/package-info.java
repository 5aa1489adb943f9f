/**
 * The seven algorithms as pure functions over immutable states: {@link LimitState} and
 * the {@link Transition} a request leads to. Stores only load, store and expire the
 * states.
 */
@NullMarked
package io.github.ratelimit.algorithm;

import org.jspecify.annotations.NullMarked;
