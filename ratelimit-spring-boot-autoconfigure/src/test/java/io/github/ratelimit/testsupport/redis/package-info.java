/**
 * Real Redis servers for tests: a JUnit 5 extension that starts a standalone server or a
 * three-master cluster per test class, with stop, restart and pause for fault tests.
 * Published in this module's test-jar for the modules built on it.
 */
@NullMarked
package io.github.ratelimit.testsupport.redis;

import org.jspecify.annotations.NullMarked;
