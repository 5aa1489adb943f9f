/**
 * Auto-configuration: properties, the store, the aspect, the filter, the endpoint and the
 * metrics, each conditional on what the application has.
 */
@NullMarked
package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.NullMarked;
