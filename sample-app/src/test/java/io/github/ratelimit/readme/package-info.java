/**
 * The README's examples, compiled by the build and checked against the README by
 * {@code ReadmeExamplesTests}: every Java block of the README is an excerpt of a file
 * here. Outside the sample app's package, so its component scan does not pick them up.
 */
@NullMarked
package io.github.ratelimit.readme;

import org.jspecify.annotations.NullMarked;
