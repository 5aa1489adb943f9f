/**
 * The store SPI every backend implements.
 */
@NullMarked
package io.github.ratelimit.store;

import org.jspecify.annotations.NullMarked;
