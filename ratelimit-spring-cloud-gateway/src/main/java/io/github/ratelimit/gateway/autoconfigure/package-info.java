/**
 * Auto-configuration of the Spring Cloud Gateway integration.
 */
@NullMarked
package io.github.ratelimit.gateway.autoconfigure;

import org.jspecify.annotations.NullMarked;
