/**
 * Buckets as the application defines them: the settings of each layer (configuration,
 * annotation or filter rule, defaults), the registry that resolves them with one
 * precedence rule and remembers where each bucket comes from, and {@code RateLimiters},
 * which hands out a direct-API limiter for any bucket by name.
 */
@NullMarked
package io.github.ratelimit.bucket;

import org.jspecify.annotations.NullMarked;
