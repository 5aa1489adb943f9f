/**
 * SpEL support shared by the annotation and the filter rules: expressions parsed once at
 * startup and evaluated per call, property reads resolved once per class, and what a
 * {@code null} key means.
 */
@NullMarked
package io.github.ratelimit.expression;

import org.jspecify.annotations.NullMarked;
